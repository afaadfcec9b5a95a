// `embpack synth`: a synthetic dataset with the length statistics of real embodied data
// (instructions of 5-60 byte tokens, 1-3 camera views, episodes of 50-500 steps, several
// embodiments with different state/action widths) and a learnable signal: states follow
// smooth per-episode trajectories and every action is a fixed smooth function of the state,
// the embodiment and the task, so a model that sees state and instruction can fit it.
// Everything is a pure function of the seed (Philox counters, core/rng.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "packed_data.hpp"

namespace emb {

struct SynthOptions {
  std::string family = "gr00t";
  int64_t episodes = 16;
  uint64_t seed = 0;
  int views = 3;  // at most this many views; embodiment e has 1 + e % views
  int64_t min_steps = 50, max_steps = 500;
  int embodiments = 3;
  int tasks = 16;
  int state_dim = 16, action_dim = 8;  // widest embodiment; the others use fewer columns
  double fps = 10;
  // gr00t: vl tokens per step = views × vl_tokens_per_view + instruction tokens.
  int d_vl = 32, vl_tokens_per_view = 4;
  // wan: latents per view and per-task text features.
  int d_txt = 32, latent_channels = 4, latent_height = 4, latent_width = 4, steps_per_latent = 4;
  bool progress = false;
};

PackedData synthesize(const SynthOptions& o);

}  // namespace emb
