// Flow-matching draws of one step (MODEL.md "Flow"/"Noise"): timesteps and noise come from
// the counter RNG keyed by (seed, step, sample_id), and noise elements by their index within
// the sample, so a sample's draws never depend on packing, padding, micro-batch or rank.
#pragma once
#include <cstdint>
#include <vector>

#include "batch/packed_batch.hpp"
#include "config/model_config.hpp"
#include "model/token_layout.hpp"

namespace emb {

struct FlowDraws {
  std::vector<float> temb_t;  // [T]: the time-embedding input of each token (0 for padding)
  // [T]: wan, what 1000·σ has beyond its fp32 value temb_t (the timestep is temb_t + temb_t_lo,
  // upstream's float64 t in two floats); empty for gr00t, whose timesteps are integers.
  std::vector<float> temb_t_lo;
  // gr00t, per sample
  std::vector<float> tau;      // [B]
  std::vector<int32_t> tq;     // [B] timestep_bucket(τ)
  std::vector<float> noise;    // [B, Hz, A]
  // wan
  std::vector<float> sigma;        // [T]: σ of the token's block; 0 for clean and padding
  std::vector<float> loss_weight;  // [T]: the loss weight w of the block's timestep id; 0 likewise
  std::vector<float> video_noise;  // [Tv, P]: rows of clean tokens are 0
  std::vector<float> act_noise;    // [Ta, A]
};

// gr00t's timestep bucket of flow time τ: upstream's (τ·1000).long() on its float32 τ, the
// float32 product truncated toward zero (τ ∈ [−0.001, 1] gives −1 .. 1000; nothing clamps it).
int32_t timestep_bucket(float tau);

// gr00t: s ~ Beta(1.5, 1), τ = (0.999 − s)/0.999, ε ~ N(0, 1) per [Hz, A] element.
// wan: a timestep id i_b uniform in {0 .. 999} per block, σ_b and the loss weight w_b from
// upstream's schedule (wan_schedule.hpp), the block keyed by its blk (sample_tokens.hpp), so
// frame 0 of a first_frame_block sample draws its own; state tokens take their block's σ and t;
// ε per element of the noisy video and action tokens, keyed by the token's index within its sample.
void draw_flow(const ModelConfig& cfg, const PackedBatch& batch, const TokenLayout& layout, int64_t step,
               uint64_t seed, FlowDraws& draws);

// The N(0, 1) draws draw_flow makes for `batch`: gr00t's [B, Hz, A]; wan's P per noisy video
// token and A per action token. Host work of the step's forward (plan/step_model.cpp times it).
int64_t flow_noise_draws(const ModelConfig& cfg, const PackedBatch& batch);

}  // namespace emb
