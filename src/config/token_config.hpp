// What the data layer and the model agree on about a sample's tokens (MODEL.md "Packed batch",
// DATA.md "Samples"): the family, the feature widths a sample carries, and the shape of its
// token sequence. The model's hyperparameters (config/model_config.hpp) extend it.
#pragma once
#include <array>
#include <tuple>

namespace emb {

enum class Family { gr00t, wan };

inline const char* family_name(Family f) { return f == Family::gr00t ? "gr00t" : "wan"; }

struct TokenConfig {
  Family family = Family::gr00t;
  int d_ctx = 0;  // context feature dim: Dvl (gr00t) or Dtxt (wan)

  // gr00t
  int n_embodiments = 0;  // E
  int state_dim = 0;      // Sd
  int action_dim = 0;     // A (both families)
  int horizon = 0;        // Hz
  int n_future = 0;       // Nf

  // wan
  int latent_channels = 0;                  // C: the latent channels of video_x0 (noised)
  // DreamZero's I2V conditioning (UPSTREAM.md "DreamZero"): Cy channels per latent pixel
  // (4-channel first-frame mask + the first frame's latents), PackedBatch::video_cond, never
  // noised, joining the latents in the patch embedding (upstream in_dim = C + Cy); 0 = none.
  int cond_channels = 0;
  // DreamZero's CLIP image context: clip_tokens rows of width d_clip per sample
  // (PackedBatch::clip; upstream 257 × 1280); 0 = none.
  int clip_tokens = 0, d_clip = 0;
  std::array<int, 3> patch{1, 2, 2};        // (pt, ph, pw)
  int frames_per_block = 0;                 // fpb
  int actions_per_block = 0;                // Ha
  // DreamZero's layout (MODEL.md "Family wan"): latent frame 0 is a block of its own, so a sample
  // has F = 1 + nb·fpb frames, and the self-attention mask is teacher_forcing; off: nb = ⌈F/fpb⌉
  // blocks of fpb frames under block_causal (the layout of models trained from scratch).
  bool first_frame_block = false;
  int states_per_block = 0;  // Ns state tokens per block (state_dim wide; needs first_frame_block)
  int latent_frames = 0;                    // F latent frames per sample
  int latent_height = 0, latent_width = 0;  // Hl, Wl
  int max_text_tokens = 0;
  // Rows every sample's text context is padded to with zero rows, attended like the text
  // (upstream's text_len, 512: its text encoder pads to it); 0 = no padding.
  int text_len = 0;

  int patch_pixels() const { return patch[0] * patch[1] * patch[2]; }
  int patch_dim_in() const { return latent_channels * patch_pixels(); }  // a video_x0 row
  int cond_patch_dim() const { return cond_channels * patch_pixels(); }  // a video_cond row
  // The patch embedding's input row: per patch pixel its C latent then Cy conditioning channels
  // (upstream's Conv3d over [latents | y], as the upstream name map permutes it).
  int embed_patch_dim() const { return (latent_channels + cond_channels) * patch_pixels(); }

  // Every field: two configs of equal fields lay out a sample's tokens alike (--plan builds each
  // layout's micro-batches once: plan/plan_batches.hpp).
  auto fields() const {
    return std::tie(family, d_ctx, n_embodiments, state_dim, action_dim, horizon, n_future, latent_channels,
                    cond_channels, clip_tokens, d_clip, patch, frames_per_block, actions_per_block, first_frame_block,
                    states_per_block, latent_frames, latent_height, latent_width, max_text_tokens, text_len);
  }
  bool operator==(const TokenConfig& o) const { return fields() == o.fields(); }
};
// A field added above must join fields(), or --plan would take two layouts for one.
static_assert(sizeof(TokenConfig) == 92, "TokenConfig changed: list the new field in TokenConfig::fields()");

}  // namespace emb
