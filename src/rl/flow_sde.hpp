// One denoising transition of a flow-matching policy as a Gaussian (CLOSED_LOOP.md "RL for a
// flow-matching action head"; πRL's Flow-SDE). GR00T's time runs t = k/K from 0 (noise) to 1
// (data) in K Euler steps of δ = 1/K, and the model predicts the velocity v = a − ε, so
//   data estimate  x̂_data  = x + (1 − t)·v,   noise estimate  x̂_noise = x − t·v.
// In openpi's notation (τ = 1 − t) the Flow-SDE step is
//   σ_t = a·sqrt((1 − t)/t)       (t = 0 uses δ in the denominator, as RLinf does: σ stays finite)
//   μ   = (t + δ)·x̂_data + (1 − t − δ − σ_t²·δ/(2(1 − t)))·x̂_noise,   std = σ_t·sqrt(δ)
// which is affine in v: μ = α·x + β·v per element. With a = 0 it is the ODE step x + δ·v
// (α = 1, β = δ, std = 0). Because μ is affine in v, the log-probability of a stored
// transition x → x' is a weighted squared error in v:
//   log N(x'; μ, std²) = −β²/(2·std²)·(v − v*)² − log std − ½ log 2π,   v* = (x' − α·x)/β
// so the PPO gradient through it is the model's flow-matching regression towards v* with a
// per-sample weight (rl/ppo.hpp), on the same forward/backward as supervised training.
#pragma once
#include <cstdint>

namespace emb {

struct FlowTransition {
  double alpha = 1, beta = 0;  // μ = alpha·x + beta·v, per element
  double std = 0;              // of x' around μ; 0 for a deterministic (ODE) step
};

// Step k (0-based, t = k/K) of K; noise_level a = 0 gives the ODE step.
FlowTransition flow_sde_transition(int k, int K, double noise_level);

// Σ over the n elements where mask ≠ 0 of log N(x_next; α·x + β·v, std²) (std > 0).
double transition_log_prob(const FlowTransition& tr, const float* x, const float* v, const float* x_next,
                           const float* mask, int64_t n);

// Σ over steps k_first .. k_first + k_count − 1 of K of transition_log_prob: chain [(k_count + 1), n]
// holds x before each step and after the last, v [k_count, n] the velocity at each.
double chain_log_prob(int k_first, int k_count, int K, double noise_level, const float* chain, const float* v,
                      const float* mask, int64_t n);

// v* = (x_next − α·x)/β: the velocity under which x_next is the transition's mean.
void transition_target_velocity(const FlowTransition& tr, const float* x, const float* x_next, float* v_target,
                                int64_t n);

// d log N / d v_e = −(β²/std²)·(v_e − v*_e): a squared error's gradient with this weight per
// unit of d(log p) (rl/ppo.hpp's coefficient multiplies it).
double log_prob_curvature(const FlowTransition& tr);

}  // namespace emb
