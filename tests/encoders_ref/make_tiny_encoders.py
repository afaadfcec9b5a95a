#!/usr/bin/python3
"""Tiny random weights for the frozen encoders, in the upstream checkpoints' formats.

    make_tiny_encoders.py --out DIR [--which eagle,vae21,vae22,t5,clip] [--seed N]

writes
  DIR/eagle/model.safetensors            backbone.eagle_model.* tensors as GR00T stores them
  DIR/eagle/config.json                  GR00T_N1_5 config fragment: {"backbone_cfg": {...}}
  DIR/eagle/eagle2_hg_model/config.json  the Eagle config (upstream structure, tiny dimensions)
  DIR/wan/Wan2.1_VAE.pth, Wan2.2_VAE.pth, models_t5_umt5-xxl-enc-bf16.pth,
          models_clip_open-clip-xlm-roberta-large-vit-huge-14.pth
                                         torch.save(state_dict) as Wan publishes them, each
                                         also as a .safetensors twin
  DIR/wan/tiny_dims.json                 the constructor arguments that build matching modules

Upstream builds these modules with fixed sizes (EagleBackbone reads its config from the
package's eagle2_hg_model/ folder, eagle_backbone.py 50; _video_vae, umt5_xxl and
clip_xlm_roberta_vit_h_14 hard-code theirs), so a tiny file loads upstream only into modules
built with the tiny arguments recorded here. Token ids keep their real ranges: the Qwen and
umT5 vocabularies stay at full size (151680 and 256384 rows).

For a combined GR00T checkpoint, `eagle_checkpoint(seed)` returns the {name: tensor} and the
config fragments so that another writer can merge them with the action head's.
"""
import argparse
import dataclasses
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import clip_reference as clip  # noqa: E402
import eagle_reference as eagle  # noqa: E402
import umt5_reference as umt5  # noqa: E402
import wan_vae_reference as vae  # noqa: E402
from safetensors_io import save_file  # noqa: E402

TINY_EAGLE = eagle.EagleDims(vision_hidden=32, vision_intermediate=40, vision_heads=2, vision_layers=2,
                             llm_hidden=32, llm_intermediate=48, llm_heads=4, llm_kv_heads=2, head_dim=16,
                             select_layer=3)
TINY_EAGLE_TOTAL_LAYERS = 4      # text_config.num_hidden_layers; GR00T keeps the first select_layer
TINY_VAE21 = vae.VaeDims(kind="wan21", dim=4, z=16)
TINY_VAE22 = vae.VaeDims(kind="wan22", dim=4, z=48, dec_dim=8)
TINY_T5 = umt5.T5Dims(dim=16, dim_attn=16, dim_ffn=24, heads=2, layers=2)
TINY_CLIP = clip.ClipDims(dim=32, heads=2, layers=3, embed_dim=16, text_vocab=64, text_dim=16, text_layers=1)

_UNIT_SUFFIXES = ("norm.weight", "norm1.weight", "norm2.weight", "layernorm.weight", "q_norm.weight",
                  "k_norm.weight", "layer_norm1.weight", "layer_norm2.weight", "post_layernorm.weight",
                  "input_layernorm.weight", "post_attention_layernorm.weight", "gamma")


def random_params(shapes, seed, scale=0.1, dtype=torch.float32):
    """Deterministic N(0, scale^2) tensors (numpy PCG64 in sorted name order); norm weights and
    VAE gammas are 1 + N(0, scale^2) so the models stay well conditioned."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in sorted(shapes):
        a = rng.standard_normal(shapes[name]) * scale
        if name.endswith(_UNIT_SUFFIXES):
            a = a + 1.0
        out[name] = torch.from_numpy(np.asarray(a)).to(dtype)
    return out


def eagle_config(d: eagle.EagleDims, total_layers):
    """eagle2_hg_model/config.json with the given dimensions (the keys the model reads)."""
    return {
        "architectures": ["Eagle2_5_VLForConditionalGeneration"], "model_type": "eagle_2_5_vl",
        "downsample_ratio": 0.5, "dynamic_image_size": True, "force_image_size": d.image_size,
        "image_token_index": d.image_token_index, "max_dynamic_tiles": 12, "min_dynamic_tiles": 1,
        "mlp_checkpoint": False, "mlp_connector_layers": 1, "pad2square": False, "select_layer": -1,
        "template": "qwen3-chat", "use_backbone_lora": 0, "use_llm_lora": 0, "use_pixel_shuffle": False,
        "use_thumbnail": True, "torch_dtype": "bfloat16",
        "text_config": {
            "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "attention_bias": False,
            "attention_dropout": 0, "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": d.head_dim,
            "hidden_act": "silu", "hidden_size": d.llm_hidden, "intermediate_size": d.llm_intermediate,
            "max_position_embeddings": 40960, "num_attention_heads": d.llm_heads,
            "num_hidden_layers": total_layers, "num_key_value_heads": d.llm_kv_heads,
            "rms_norm_eps": d.rms_eps, "rope_scaling": None, "rope_theta": int(d.rope_theta),
            "sliding_window": None, "tie_word_embeddings": True, "use_cache": False,
            "use_sliding_window": False, "vocab_size": d.vocab},
        "vision_config": {
            "model_type": "siglip_vision_model", "attention_dropout": 0, "hidden_act": "gelu_pytorch_tanh",
            "hidden_size": d.vision_hidden, "image_size": d.image_size,
            "intermediate_size": d.vision_intermediate, "layer_norm_eps": d.vision_eps,
            "num_attention_heads": d.vision_heads, "num_channels": 3,
            "num_hidden_layers": d.vision_layers, "patch_size": d.patch},
    }


def backbone_cfg(d: eagle.EagleDims):
    """GR00T_N1_5 config.json's backbone_cfg as N1.5 ships it (project_to_dim null, so
    eagle_linear is the identity and stores nothing)."""
    return {"eagle_path": None, "load_bf16": False, "project_to_dim": None, "reproject_vision": False,
            "select_layer": d.select_layer, "tune_llm": False, "tune_visual": True,
            "use_flash_attention": True}


def eagle_checkpoint(seed=0, d: eagle.EagleDims = TINY_EAGLE, total_layers=TINY_EAGLE_TOTAL_LAYERS):
    """({checkpoint name: float32 tensor}, {"backbone_cfg": ..., "eagle_config": ...})."""
    tensors = random_params(eagle.param_shapes(d), seed)
    return tensors, {"backbone_cfg": backbone_cfg(d), "eagle_config": eagle_config(d, total_layers)}


def wan_checkpoints(seed=0, t5=TINY_T5):
    """{file stem: (state dict, constructor arguments)} for the four Wan encoder files."""
    vae_args = lambda d: {"dim": d.dim, "z_dim": d.z, "dim_mult": d.dim_mult,  # noqa: E731
                          "num_res_blocks": d.num_res_blocks, "temperal_downsample": d.temporal_down,
                          **({"dec_dim": d.dec_dim} if d.kind == "wan22" else {})}
    t5_args = {"vocab": t5.vocab, "dim": t5.dim, "dim_attn": t5.dim_attn,
               "dim_ffn": t5.dim_ffn, "num_heads": t5.heads, "num_layers": t5.layers,
               "num_buckets": t5.buckets, "shared_pos": False}
    c = TINY_CLIP
    clip_args = {"embed_dim": c.embed_dim, "image_size": c.image_size, "patch_size": c.patch,
                 "vision_dim": c.dim, "vision_mlp_ratio": c.mlp_ratio, "vision_heads": c.heads,
                 "vision_layers": c.layers, "vocab_size": c.text_vocab, "max_text_len": c.text_max_len,
                 "text_dim": c.text_dim, "text_heads": 2, "text_layers": c.text_layers}
    return {
        "Wan2.1_VAE": (random_params(vae.param_shapes(TINY_VAE21), seed + 1), vae_args(TINY_VAE21)),
        "Wan2.2_VAE": (random_params(vae.param_shapes(TINY_VAE22), seed + 2), vae_args(TINY_VAE22)),
        "models_t5_umt5-xxl-enc-bf16": (random_params(umt5.param_shapes(t5), seed + 3, dtype=torch.bfloat16),
                                        t5_args),
        "models_clip_open-clip-xlm-roberta-large-vit-huge-14": (random_params(clip.param_shapes(c), seed + 4),
                                                                 clip_args),
    }


def write_eagle(out_dir, seed, image_size=TINY_EAGLE.image_size):
    tensors, fragments = eagle_checkpoint(seed, dataclasses.replace(TINY_EAGLE, image_size=image_size))
    os.makedirs(os.path.join(out_dir, "eagle2_hg_model"), exist_ok=True)
    save_file(tensors, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump({"model_type": "gr00t_n1_5", "backbone_cfg": fragments["backbone_cfg"]}, f, indent=2)
    with open(os.path.join(out_dir, "eagle2_hg_model", "config.json"), "w") as f:
        json.dump(fragments["eagle_config"], f, indent=2)


def write_wan(out_dir, seed, which, t5=TINY_T5):
    os.makedirs(out_dir, exist_ok=True)
    dims = {}
    wanted = {"vae21": "Wan2.1_VAE", "vae22": "Wan2.2_VAE", "t5": "models_t5_umt5-xxl-enc-bf16",
              "clip": "models_clip_open-clip-xlm-roberta-large-vit-huge-14"}
    for stem, (state, args) in wan_checkpoints(seed, t5).items():
        if stem not in [wanted[w] for w in which if w in wanted]:
            continue
        torch.save(state, os.path.join(out_dir, stem + ".pth"))
        save_file(state, os.path.join(out_dir, stem + ".safetensors"))
        dims[stem] = args
    with open(os.path.join(out_dir, "tiny_dims.json"), "w") as f:
        json.dump(dims, f, indent=2)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--which", default="eagle,vae21,vae22,t5,clip",
                    help="comma-separated subset of eagle,vae21,vae22,t5,clip (default: all)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--image-size", type=int, default=TINY_EAGLE.image_size,
                    help=f"eagle: the frames' size (force_image_size; default {TINY_EAGLE.image_size}, upstream's)")
    ap.add_argument("--t5-dim", type=int, default=TINY_T5.dim,
                    help=f"umT5 width (default {TINY_T5.dim}; a DiT's text_dim to feed one)")
    args = ap.parse_args(argv)
    which = [w.strip() for w in args.which.split(",") if w.strip()]
    unknown = sorted(set(which) - {"eagle", "vae21", "vae22", "t5", "clip"})
    if unknown:
        ap.error(f"--which: unknown encoder(s) {', '.join(unknown)}; choose from eagle,vae21,vae22,t5,clip")
    if "eagle" in which:
        write_eagle(os.path.join(args.out, "eagle"), args.seed, args.image_size)
    if set(which) - {"eagle"}:
        t5 = umt5.T5Dims(dim=args.t5_dim, dim_attn=args.t5_dim, dim_ffn=TINY_T5.dim_ffn, heads=TINY_T5.heads,
                         layers=TINY_T5.layers)
        write_wan(os.path.join(args.out, "wan"), args.seed, which, t5)
    print(f"make_tiny_encoders: wrote {', '.join(which)} under {args.out}")


if __name__ == "__main__":
    main()
