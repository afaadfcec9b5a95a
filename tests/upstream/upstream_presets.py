"""The released configurations (real values, with where each was read) and the tiny
upstream-expressible configurations the tests and make_tiny_checkpoint.py use.

Every preset is a dict in the structure of the release's config.json, so the references
(gr00t_n15_reference.dims_from_config, dreamzero_reference.dims_from_config) read them as they
would read a checkpoint's config.json.

Sources:
  GR00T-N1.5-3B: config.json of the nvidia/GR00T-N1.5-3B checkpoint (not in the Isaac-GR00T
    repository; values as quoted in /work/shared/UPSTREAM.md "Released config" and a public copy of
    the file). Keys absent from it take the constructor defaults of Isaac-GR00T 4af2b622892f
    (FM = gr00t/model/action_head/flow_matching_action_head.py 107-154, CAD =
    gr00t/model/action_head/cross_attention_dit.py 195-215, 313-329). The Eagle backbone's own
    config is gr00t/model/backbone/eagle2_hg_model/config.json (lines cited below).
  DreamZero (dreamzero0/dreamzero ab790c1): hydra configs groot/vla/configs/model/dreamzero/
    action_head/wan_flow_matching_action_tf.yaml (AHY), ..._wan22.yaml (AHY22),
    transform/dreamzero_cotrain.yaml (TRY), the training scripts scripts/train/
    droid_training_full_finetune.sh (SH14) and droid_training_full_finetune_wan22.sh (SH5),
    and CausalWanModel's defaults (CWM = groot/vla/model/dreamzero/modules/
    wan_video_dit_action_casual_chunk.py 1266-1293). The released DreamZero config.json was not
    available; the structure below follows the VLA config (base_vla.py 21-40) holding the hydra
    action_head_cfg.
"""
import copy

# ---- GR00T-N1.5-3B ------------------------------------------------------------------------------
GR00T_N15_3B = {
    "action_dim": 32,
    "action_head_cfg": {
        "action_dim": 32,
        "action_horizon": 16,
        "add_pos_embed": True,
        "backbone_embedding_dim": 2048,
        "diffusion_model_cfg": {
            "attention_head_dim": 48,
            "cross_attention_dim": 2048,
            "dropout": 0.2,
            "final_dropout": True,
            "interleave_self_attention": True,
            "norm_type": "ada_norm",
            "num_attention_heads": 32,
            "num_layers": 16,
            "output_dim": 1024,
            "positional_embeddings": None,
        },
        "hidden_size": 1024,
        "input_embedding_dim": 1536,
        "max_action_dim": 32,
        "max_state_dim": 64,
        "model_dtype": "float32",
        "noise_beta_alpha": 1.5,
        "noise_beta_beta": 1.0,
        "noise_s": 0.999,
        "num_inference_timesteps": 4,
        "num_target_vision_tokens": 32,
        "num_timestep_buckets": 1000,
        "tune_diffusion_model": True,
        "tune_projector": True,
        "use_vlln": True,
        "vl_self_attention_cfg": {
            "attention_head_dim": 64,
            "dropout": 0.2,
            "final_dropout": True,
            "num_attention_heads": 32,
            "num_layers": 4,
            "positional_embeddings": None,
        },
        # absent from the release: max_seq_len 1024, max_num_embodiments 32 (FM 122, 137)
    },
    "action_horizon": 16,
    "architectures": ["GR00T_N1_5"],
    "attn_implementation": None,
    "backbone_cfg": {
        "eagle_path": "NVEagle/eagle_er-qwen3_1_7B-Siglip2_400M_stage1_5_128gpu_er_v7_1mlp_nops",
        "load_bf16": False,
        "project_to_dim": None,
        "reproject_vision": False,
        "select_layer": 12,
        "tune_llm": False,
        "tune_visual": True,
        "use_flash_attention": True,
    },
    "hidden_size": 2048,
    "model_dtype": "float32",
    "model_type": "gr00t_n1_5",
    "torch_dtype": "bfloat16",
    "transformers_version": "4.51.3",
}

# Eagle 2.5 backbone as the package builds it (eagle2_hg_model/config.json): vision 36-75
# (SigLIP: hidden 1152 l.65, 27 layers l.72, 16 heads l.70, MLP 4304 l.67, patch 14 l.73,
# image 224 l.66, LN eps 1e-6 l.68), text 24-54 (Qwen3: hidden 2048 l.36, head_dim 128 l.34,
# 16 q / 8 kv heads l.42/44, MLP 6144 l.38, rms eps 1e-6 l.45, rope theta 1e6 l.47, vocab
# 151680 l.53, tied embeddings l.49), image token 151669 l.14, one-layer mlp1 l.19 without pixel
# shuffle l.59; the checkpoint keeps the first select_layer = 12 LLM layers (eagle_backbone.py 59-60).
EAGLE_N15 = {
    "vision": dict(hidden_size=1152, intermediate_size=4304, num_attention_heads=16, num_hidden_layers=27,
                   patch_size=14, image_size=224, num_channels=3, layer_norm_eps=1e-6),
    "text": dict(hidden_size=2048, intermediate_size=6144, num_attention_heads=16, num_key_value_heads=8,
                 head_dim=128, num_hidden_layers=28, kept_layers=12, vocab_size=151680, rms_norm_eps=1e-6,
                 rope_theta=1000000),
}

# ---- DreamZero ----------------------------------------------------------------------------------
_DREAMZERO_14B_MODEL = {
    "_target_": "groot.vla.model.dreamzero.modules.wan_video_dit_action_casual_chunk.CausalWanModel",
    "model_type": "i2v",             # AHY 63
    "frame_seqlen": 880,             # SH14 86 (352x640 VAE input -> 44x80 latent -> 22x40 patches)
    "dim": 5120,                     # AHY 65
    "in_dim": 36,                    # AHY 66 (16 noisy + 4 mask + 16 first-frame latents)
    "ffn_dim": 13824,                # AHY 67
    "out_dim": 16,                   # AHY 68
    "freq_dim": 256,                 # AHY 69
    "eps": 1e-6,                     # AHY 70
    "num_heads": 40,                 # AHY 71
    "num_layers": 40,                # AHY 72
    "max_chunk_size": 4,             # SH14 85 (the data config's 5, droid_relative.yaml 13, is overridden)
    "num_frame_per_block": 2,        # SH14 63
    "num_action_per_block": 24,      # SH14 64
    "num_state_per_block": 1,        # SH14 65
    # CausalWanModel defaults the yaml does not override (CWM 1266-1293):
    "patch_size": [1, 2, 2], "text_len": 512, "text_dim": 4096, "qk_norm": True, "cross_attn_norm": True,
    "action_dim": 32, "max_state_dim": 64, "hidden_size": 1024, "concat_first_frame_latent": True,
}

DREAMZERO_14B_DROID = {
    "model_type": "vla",
    "architectures": ["VLA"],
    "action_dim": 32,                # TRY 29 (max_action_dim -> AHY 90)
    "action_horizon": 24,            # SH14 58
    "compute_dtype": "float32",
    "model_dtype": "float32",        # vla.yaml 15
    "num_frames": 33,                # SH14 57: 33 video frames -> 9 latent frames = 1 + 4 blocks x 2
    "backbone_cfg": {"_target_": "groot.vla.model.dreamzero.backbone.identity.IdentityBackbone"},
    "action_head_cfg": {
        "_target_": "groot.vla.model.dreamzero.action_head.wan_flow_matching_action_tf.WANPolicyHead",
        "config": {
            "num_frames": 33, "num_frame_per_block": 2, "train_architecture": "full",  # SH14 56
            "action_dim": 32, "action_horizon": 24, "max_state_dim": 64, "max_action_dim": 32,
            "noise_beta_alpha": 1.5, "noise_beta_beta": 1.0, "noise_s": 0.999,  # AHY 93-95 (unused by the loss)
            "decouple_video_action_noise": False,                               # AHY 101
            "diffusion_model_cfg": _DREAMZERO_14B_MODEL,
        },
    },
}

DREAMZERO_5B_DROID = copy.deepcopy(DREAMZERO_14B_DROID)
DREAMZERO_5B_DROID["action_head_cfg"]["config"]["diffusion_model_cfg"].update({
    "model_type": "ti2v",            # AHY22 23 (i2v cross-attention with img_emb, CWM 1398, 1420)
    "frame_seqlen": 50,              # AHY22 15 (160x320 -> VAE38 10x20 latent -> 5x10 patches)
    "dim": 3072, "in_dim": 48, "concat_first_frame_latent": False, "ffn_dim": 14336, "out_dim": 48,
    "freq_dim": 256, "eps": 1e-6, "num_heads": 24, "num_layers": 30,       # AHY22 24-32
})
DREAMZERO_5B_DROID["action_head_cfg"]["config"]["target_video_height"] = 160  # AHY22 20
DREAMZERO_5B_DROID["action_head_cfg"]["config"]["target_video_width"] = 320   # AHY22 21

# ---- tiny, upstream-expressible -----------------------------------------------------------------
# GR00T ties: DiT width = heads*head_dim = input_embedding_dim, output_dim = hidden_size,
# cross_attention_dim = backbone_embedding_dim = VL heads*head_dim, FFNs 4x (diffusers default).
TINY_GR00T = copy.deepcopy(GR00T_N15_3B)
TINY_GR00T.update(action_dim=8, action_horizon=6, hidden_size=64)
TINY_GR00T["backbone_cfg"]["select_layer"] = 2
TINY_GR00T["action_head_cfg"].update(
    action_dim=8, action_horizon=6, backbone_embedding_dim=64, hidden_size=32, input_embedding_dim=64,
    max_action_dim=8, max_state_dim=12, num_target_vision_tokens=4, max_seq_len=32, max_num_embodiments=32)
TINY_GR00T["action_head_cfg"]["diffusion_model_cfg"].update(
    attention_head_dim=16, cross_attention_dim=64, num_attention_heads=4, num_layers=4, output_dim=32)
TINY_GR00T["action_head_cfg"]["vl_self_attention_cfg"].update(
    attention_head_dim=32, num_attention_heads=2, num_layers=2)

# The tiny Eagle backbone (its LLM width is the head's backbone_embedding_dim, project_to_dim null).
TINY_EAGLE = {
    "vision": dict(hidden_size=32, intermediate_size=64, num_attention_heads=2, num_hidden_layers=2,
                   patch_size=14, image_size=28, num_channels=3, layer_norm_eps=1e-6),
    "text": dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                 head_dim=16, num_hidden_layers=2, kept_layers=2, vocab_size=256, rms_norm_eps=1e-6,
                 rope_theta=1000000),
}

# DreamZero tiny: Wan2.1 I2V layout (in_dim 36 = 16 + 4 + 16), 4x4 latents -> 2x2 = 4 tokens per
# frame, 5 latent frames = 1 + 2 blocks x 2, a window of max_chunk 1 (3 frames) that cuts a block.
TINY_DREAMZERO = copy.deepcopy(DREAMZERO_14B_DROID)
TINY_DREAMZERO.update(action_dim=8, action_horizon=4, num_frames=17)
TINY_DREAMZERO["action_head_cfg"]["config"].update(num_frames=17, action_dim=8, action_horizon=4,
                                                   max_state_dim=12, max_action_dim=8)
TINY_DREAMZERO["action_head_cfg"]["config"]["diffusion_model_cfg"].update(
    frame_seqlen=4, dim=64, ffn_dim=256, num_heads=4, num_layers=2, text_dim=32, max_chunk_size=1,
    num_action_per_block=4, action_dim=8, max_state_dim=12, hidden_size=32)

PRESETS = {
    "gr00t_n15_3b": GR00T_N15_3B,
    "dreamzero_14b_droid": DREAMZERO_14B_DROID,
    "dreamzero_5b_droid": DREAMZERO_5B_DROID,
    "tiny_gr00t": TINY_GR00T,
    "tiny_dreamzero": TINY_DREAMZERO,
}
