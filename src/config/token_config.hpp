// What the data layer and the model agree on about a sample's tokens (MODEL.md "Packed batch",
// DATA.md "Samples"): the family, the feature widths a sample carries, and the shape of its
// token sequence. The model's hyperparameters (config/model_config.hpp) extend it.
#pragma once
#include <array>

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
  int latent_channels = 0;                  // C in (patch_embed input channels)
  std::array<int, 3> patch{1, 2, 2};        // (pt, ph, pw)
  int frames_per_block = 0;                 // fpb
  int actions_per_block = 0;                // Ha
  int latent_frames = 0;                    // F latent frames per sample
  int latent_height = 0, latent_width = 0;  // Hl, Wl
  int max_text_tokens = 0;

  int patch_dim_in() const { return latent_channels * patch[0] * patch[1] * patch[2]; }
};

}  // namespace emb
