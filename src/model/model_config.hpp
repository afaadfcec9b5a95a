// The resolved hyperparameters of one model (MODEL.md "Presets"): a preset's values with
// the deck's [model] overrides applied and validated. Shared by the model (shapes), the
// data layer (sample shapes, token counts) and --plan.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace emb {

enum class Family { gr00t, wan };
enum class Precision { fp32, bf16 };
enum class Recompute { none, selective, full };
// Self-attention mask of the DiT blocks. `family` is MODEL.md's (gr00t: full on odd layers,
// wan: block_causal); the others let tests run every mask through a whole model.
enum class SelfMask { family, full, block_causal, prefix };

struct ModelConfig {
  std::string preset;
  Family family = Family::gr00t;

  // The DiT trunk.
  int d_model = 0;   // D
  int n_layers = 0;  // L
  int n_heads = 0;   // H
  int d_ff = 0;      // F
  int d_ctx = 0;     // context feature dim: Dvl (gr00t) or Dtxt (wan)

  // gr00t
  int n_layers_vl = 0;    // Lvl
  int n_heads_vl = 0;
  int d_out = 0;          // Dout
  int d_hidden_enc = 0;   // Dh
  int n_embodiments = 0;  // E
  int state_dim = 0;      // Sd
  int action_dim = 0;     // A (both families)
  int horizon = 0;        // Hz
  int n_future = 0;       // Nf

  // wan
  int latent_channels = 0;               // C in (patch_embed input channels)
  int out_channels = 0;                  // C out (head.proj); equals C in except 14B I2V
  std::array<int, 3> patch{1, 2, 2};     // (pt, ph, pw)
  int frames_per_block = 0;              // fpb
  int actions_per_block = 0;             // Ha
  int latent_frames = 0;                 // F latent frames per sample
  int latent_height = 0, latent_width = 0;  // Hl, Wl
  int max_text_tokens = 0;
  double shift = 5.0;
  double action_loss_weight = 1.0;

  Precision precision = Precision::fp32;
  Recompute recompute = Recompute::none;
  double init_std = 0.02;
  SelfMask self_mask = SelfMask::family;

  int head_dim() const { return d_model / n_heads; }
  int patch_dim_in() const { return latent_channels * patch[0] * patch[1] * patch[2]; }
  int patch_dim_out() const { return out_channels * patch[0] * patch[1] * patch[2]; }
};

const char* family_name(Family f);

}  // namespace emb
