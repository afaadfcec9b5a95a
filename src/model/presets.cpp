#include "model/presets.hpp"

#include "core/error.hpp"

namespace emb {
namespace {

ModelConfig trunk(const char* name, Family family, int D, int L, int H, int F, int d_ctx) {
  ModelConfig c;
  c.preset = name, c.family = family;
  c.d_model = D, c.n_layers = L, c.n_heads = H, c.d_ff = F, c.d_ctx = d_ctx;
  return c;
}

// GR00T-N1.5's action head as upstream builds it (UPSTREAM.md, the spec's config.json table):
// Dout = Dh (the action decoder reads hidden_size features), both FFNs 4× their width (diffusers'
// FeedForward), the position table of max_seq_len rows, dropout 0.2 in the DiT and the vl blocks.
void set_gr00t_heads(ModelConfig& c, int Lvl, int Hvl, int Dh, int E, int Sd, int A, int Hz, int Nf, int max_seq_len) {
  c.n_layers_vl = Lvl, c.n_heads_vl = Hvl, c.d_out = Dh, c.d_hidden_enc = Dh, c.n_embodiments = E;
  c.state_dim = Sd, c.action_dim = A, c.horizon = Hz, c.n_future = Nf, c.max_seq_len = max_seq_len;
  c.dropout = 0.2, c.dropout_vl = 0.2;
}

// Dh: the action decoder's hidden width (CausalWanModel's hidden_size, 1024 in the releases).
void set_wan_video(ModelConfig& c, int C_in, int C_out, int fpb, int Ha, int A, int Dh, int F, int Hl, int Wl,
                   int max_txt) {
  c.latent_channels = C_in, c.out_channels = C_out, c.patch = {1, 2, 2};
  c.frames_per_block = fpb, c.actions_per_block = Ha, c.action_dim = A, c.d_hidden_enc = Dh;
  c.latent_frames = F, c.latent_height = Hl, c.latent_width = Wl, c.max_text_tokens = max_txt;
}

// DreamZero's image conditioning (UPSTREAM.md "DreamZero"): the I2V y channels (4 mask + C
// first-frame latents) when upstream concatenates them (concat_first_frame_latent, Wan2.1 I2V),
// and the CLIP context of Nclip rows of width d_clip (upstream 257 x 1280 in every release).
void set_image_conditioning(ModelConfig& c, bool y_channels, int clip_tokens, int d_clip) {
  c.cond_channels = y_channels ? 4 + c.latent_channels : 0;
  c.clip_tokens = clip_tokens, c.d_clip = d_clip;
}

constexpr int kClipTokens = 257, kClipDim = 1280;

}  // namespace

ModelConfig preset_config(const std::string& name) {
  ModelConfig c;
  if (name == "tiny_gr00t") {
    c = trunk("tiny_gr00t", Family::gr00t, 64, 2, 4, 256, 32);
    set_gr00t_heads(c, 1, 4, 32, 3, 16, 8, 8, 4, 32);
  } else if (name == "gr00t_n1.5_3b") {
    // The released GR00T-N1.5-3B action head: DiT 32 × 48 = 1536 wide, 16 layers; Eagle 2.5
    // features 2048 wide, 4 vl blocks of 32 × 64; hidden 1024; 32 embodiment slots.
    c = trunk("gr00t_n1.5_3b", Family::gr00t, 1536, 16, 32, 6144, 2048);
    set_gr00t_heads(c, 4, 32, 1024, 32, 64, 32, 16, 32, 1024);
  } else if (name == "tiny_wan") {
    c = trunk("tiny_wan", Family::wan, 64, 2, 4, 256, 32);
    set_wan_video(c, 4, 4, 2, 2, 8, 32, 4, 4, 4, 16);
  } else if (name == "tiny_dreamzero") {
    // DreamZero's layout at test size: frame 0 its own block then 3 blocks of 2 frames (F = 7)
    // of 4x4x4 latents, 2 actions and 1 state of width 8 per block, a clean window of 3 frames
    // (it hides clean frame 1 from clean block 1, which noisy block 2 reads); the y channels
    // (4 + 4) and upstream's 257 CLIP rows at width 16.
    c = trunk("tiny_dreamzero", Family::wan, 64, 2, 4, 256, 32);
    set_wan_video(c, 4, 4, 2, 2, 8, 32, 7, 4, 4, 16);
    c.first_frame_block = true, c.states_per_block = 1, c.state_dim = 8, c.max_chunk = 1, c.text_len = 16;
    set_image_conditioning(c, true, kClipTokens, 16);
  } else if (name == "dreamzero_14b_droid") {
    // The released DreamZero 14B DROID configuration (Wan2.1 I2V-14B: in_dim 36 = 16 latents + 4
    // mask + 16 first-frame latents, out_dim 16; 352x640 video -> 44x80 latents, 33 frames ->
    // 9 = 1 + 4·2 latent frames; Ha 24, A 32, max_state_dim 64, max_chunk_size 4, text_len 512,
    // the CLIP context; tests/upstream/upstream_presets.py).
    c = trunk("dreamzero_14b_droid", Family::wan, 5120, 40, 40, 13824, 4096);
    set_wan_video(c, 16, 16, 2, 24, 32, 1024, 9, 44, 80, 512);
    c.first_frame_block = true, c.states_per_block = 1, c.state_dim = 64, c.max_chunk = 4, c.text_len = 512;
    set_image_conditioning(c, true, kClipTokens, kClipDim);
  } else if (name == "dreamzero_5b_droid") {
    // The released DreamZero 5B DROID configuration (Wan2.2 TI2V-5B, VAE38: 48 channels, no y;
    // 160x320 video -> 10x20 latents, 33 frames -> 9 = 1 + 4·2 latent frames; Ha 24, A 32,
    // max_state_dim 64, max_chunk_size 4, text_len 512; tests/upstream/upstream_presets.py).
    c = trunk("dreamzero_5b_droid", Family::wan, 3072, 30, 24, 14336, 4096);
    set_wan_video(c, 48, 48, 2, 24, 32, 1024, 9, 10, 20, 512);
    c.first_frame_block = true, c.states_per_block = 1, c.state_dim = 64, c.max_chunk = 4, c.text_len = 512;
    set_image_conditioning(c, false, kClipTokens, kClipDim);  // ti2v: img_emb and the I2V cross-attention
  } else if (name == "dreamzero5b") {
    // Wan2.2 TI2V-5B: VAE /16 with 48 channels, so 480x832 video is a 30x52 latent; 33 frames
    // are 9 latent frames.
    c = trunk("dreamzero5b", Family::wan, 3072, 30, 24, 14336, 4096);
    set_wan_video(c, 48, 48, 2, 8, 32, 1024, 9, 30, 52, 512);
    c.text_len = 512;
  } else if (name == "dreamzero14b") {
    // Wan2.1 I2V-14B: VAE /8, 480x832 is a 60x104 latent; input 16 noisy + 20 mask/image channels.
    c = trunk("dreamzero14b", Family::wan, 5120, 40, 40, 13824, 4096);
    set_wan_video(c, 36, 16, 2, 8, 32, 1024, 9, 60, 104, 512);
    c.text_len = 512;
  } else {
    throw Error(str("unknown model preset ", quoted(name)), kExitInput);
  }
  return c;
}

void validate_model_config(const ModelConfig& c, const ModelKeyWhere& where) {
  // `key` names the check; `also` are the other keys it involves (the line of the first one
  // the deck sets is where the message points).
  auto check = [&](bool ok, const char* key, const std::string& what, std::initializer_list<const char*> also = {}) {
    if (ok) return;
    std::vector<std::string> keys{key};
    keys.insert(keys.end(), also.begin(), also.end());
    throw Error(str(where(keys), ": model.", key, ": ", what), kExitInput);
  };
  check(c.d_model > 0 && c.n_layers > 0 && c.n_heads > 0 && c.d_ff > 0 && c.d_ctx > 0, "d_model",
        "d_model, n_layers, n_heads, d_ff and d_ctx must be positive");
  check(c.d_model % c.n_heads == 0, "n_heads", str("n_heads = ", c.n_heads, " must divide d_model = ", c.d_model),
        {"d_model"});
  check(c.action_dim > 0, "action_dim", "action_dim must be positive");
  if (c.family == Family::gr00t) {
    check(c.n_layers_vl >= 0 && c.n_heads_vl > 0, "n_heads_vl", "n_heads_vl must be positive");
    check(c.d_ctx % c.n_heads_vl == 0, "n_heads_vl",
          str("n_heads_vl = ", c.n_heads_vl, " must divide d_ctx = ", c.d_ctx), {"d_ctx"});
    check(c.d_out > 0 && c.d_hidden_enc > 0 && c.n_embodiments > 0 && c.state_dim > 0 && c.horizon > 0 &&
              c.n_future >= 0,
          "d_out", "d_out, d_hidden_enc, n_embodiments, state_dim and horizon must be positive");
    check(c.d_model % 2 == 0, "d_model", "d_model must be even (sinusoidal action-time embedding)");
    check(c.d_ff == 4 * c.d_model, "d_ff",
          str("d_ff = ", c.d_ff, " must be 4·d_model = ", 4 * c.d_model,
              " (upstream's FeedForward width; leave model.d_ff unset for gr00t)"),
          {"d_model"});
    check(c.d_out == c.d_hidden_enc, "d_out",
          str("d_out = ", c.d_out, " must equal d_hidden_enc = ", c.d_hidden_enc,
              " (upstream's DiT output_dim is the action decoder's hidden_size; leave model.d_out unset)"),
          {"d_hidden_enc"});
    check(c.max_seq_len >= c.horizon, "max_seq_len",
          str("max_seq_len = ", c.max_seq_len, " must be at least horizon = ", c.horizon,
              " (the position table's rows 0..horizon-1 are added to the action tokens)"),
          {"horizon"});
    check(c.dropout >= 0 && c.dropout < 1 && c.dropout_vl >= 0 && c.dropout_vl < 1, "dropout",
          "dropout and dropout_vl must lie in [0, 1)", {"dropout_vl"});
    check(!c.online_backbone || !c.backbone_dir.empty(), "backbone_dir",
          "model.backbone = online needs the GR00T-N1.5 checkpoint folder whose Eagle backbone computes the vl "
          "features", {"backbone"});
  } else {
    check(!c.online_backbone, "backbone", "model.backbone = online is gr00t's (the Eagle backbone); wan reads its "
          "text features from the packed files or computes them with model.encoders = online");
    check(c.dropout == 0 && c.dropout_vl == 0, "dropout", "the wan family has no dropout sites; set 0 or -1",
          {"dropout_vl"});
    int hd = c.head_dim();
    check(hd % 2 == 0 && hd / 2 / 3 >= 1, "n_heads",
          str("head dim d_model/n_heads = ", hd, " must be even with at least 3 rotary pairs (3d RoPE)"), {"d_model"});
    check(c.patch[0] > 0 && c.patch[1] > 0 && c.patch[2] > 0, "patch", "patch sizes must be positive");
    check(c.latent_channels > 0 && c.out_channels > 0 && c.out_channels <= c.latent_channels, "out_channels",
          str("out_channels = ", c.out_channels, " must be in 1..latent_channels = ", c.latent_channels),
          {"latent_channels"});
    check(c.latent_frames > 0, "latent_frames", "latent_frames must be positive");
    check(c.latent_frames % c.patch[0] == 0, "latent_frames",
          str("latent_frames = ", c.latent_frames, " must be divisible by patch[0] = ", c.patch[0]), {"patch"});
    check(c.latent_height > 0 && c.latent_height % c.patch[1] == 0, "latent_height",
          str("latent_height = ", c.latent_height, " must be a positive multiple of patch[1] = ", c.patch[1]),
          {"patch"});
    check(c.latent_width > 0 && c.latent_width % c.patch[2] == 0, "latent_width",
          str("latent_width = ", c.latent_width, " must be a positive multiple of patch[2] = ", c.patch[2]),
          {"patch"});
    check(c.frames_per_block > 0 && c.frames_per_block % c.patch[0] == 0, "frames_per_block",
          str("frames_per_block = ", c.frames_per_block, " must be a positive multiple of patch[0] = ", c.patch[0]),
          {"patch"});
    check(c.actions_per_block >= 0, "actions_per_block", "actions_per_block must not be negative");
    check(c.d_hidden_enc > 0, "d_hidden_enc", "d_hidden_enc (the action decoder's hidden width) must be positive");
    check(c.max_text_tokens > 0, "max_text_tokens", "max_text_tokens must be positive");
    check(c.text_len == 0 || c.text_len >= c.max_text_tokens, "text_len",
          str("text_len = ", c.text_len, " is below max_text_tokens = ", c.max_text_tokens,
              " (every sample's text is padded to text_len rows; -1 drops the padding)"),
          {"max_text_tokens"});
    check(c.shift > 0, "shift", "shift must be positive");
    check(c.cond_channels >= 0 && (c.cond_channels == 0 || c.first_frame_block), "cond_channels",
          "the I2V y channels (cond_channels) need the DreamZero layout (frame 0 its own block)");
    check(c.clip_tokens >= 0 && (c.clip_tokens == 0 || (c.first_frame_block && c.d_clip > 0)), "clip_tokens",
          "the CLIP context (clip_tokens) needs the DreamZero layout and d_clip > 0", {"d_clip"});
    check(c.states_per_block >= 0 && (c.states_per_block == 0 || (c.first_frame_block && c.state_dim > 0)),
          "states_per_block", "state tokens need the DreamZero layout (frame 0 its own block) and state_dim > 0",
          {"state_dim"});
    if (c.first_frame_block) {
      const int fpb = c.frames_per_block;
      check(c.latent_frames > 1 && (c.latent_frames - 1) % fpb == 0, "latent_frames",
            str("latent_frames = ", c.latent_frames, " must be 1 + nb·frames_per_block (", fpb,
                ") with nb >= 1: frame 0 is its own block"),
            {"frames_per_block"});
      check(c.patch[0] == 1, "patch", "the DreamZero layout has per-frame timesteps: patch[0] must be 1");
      check(c.actions_per_block % fpb == 0 && (c.states_per_block == 0 || fpb % c.states_per_block == 0),
            "actions_per_block",
            str("actions_per_block = ", c.actions_per_block, " must be a multiple of frames_per_block = ", fpb,
                " and states_per_block = ", c.states_per_block, " must divide it (upstream's ties)"),
            {"frames_per_block", "states_per_block"});
      check(c.latent_channels == c.out_channels, "latent_channels",
            str("latent_channels = ", c.latent_channels, " != out_channels = ", c.out_channels,
                ": in the DreamZero layout the latents are the head's channels; the I2V y channels (never "
                "noised) are model.cond_channels"),
            {"out_channels"});
      check(c.max_chunk >= 1, "max_chunk_size",
            str("max_chunk_size = ", c.max_chunk, ": the clean stream's window needs a chunk count >= 1 (upstream's "
                "-1, a token-causal clean stream, is not implemented)"));
    }
  }
  check(c.init_std > 0, "init_std", "init_std must be positive");
}

void validate_model_config(const ModelConfig& c, const std::string& where) {
  validate_model_config(c, [&](const std::vector<std::string>&) { return where; });
}

}  // namespace emb
