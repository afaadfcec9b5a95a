// PPO for stale samples (CLOSED_LOOP.md "Asynchrony"; the decoupled objective of AReaL and
// RLinf's async PPO) and GAE. Three policies meet in one sample: π_behav produced it (its
// version's weights on a generator), π_prox is the trainer's policy at the start of the
// current update, π_θ the one being optimised. Per sample, with advantage A:
//   w = π_prox / π_behav         importance weight of the staleness; the sample is filtered out
//                                (no gradient, not counted) when w > behav_weight_max
//   r = π_θ / π_prox             PPO's ratio, clipped to [1 − ε, 1 + ε]
//   obj = min(r·A, clip(r)·A);  for A < 0 also max(obj, c·A)   (dual clip, c = dual_clip)
//   loss = −w·obj / N            N = unfiltered samples of the update (over every trainer)
// d loss / d log π_θ is −w·r·A/N where the unclipped term is the active one, else 0: that
// coefficient times the transition's d log π / d v (rl/flow_sde.hpp) is the policy gradient.
#pragma once
#include <cstdint>
#include <vector>

namespace emb {

struct PpoConfig {
  double clip = 0.2;              // ε
  double dual_clip = 3.0;         // c
  double behav_weight_max = 2.0;  // filter threshold on w
};

struct PpoSampleTerms {
  bool filtered = false;  // w above the threshold: no loss, no gradient
  double w = 1, ratio = 1;
  double loss = 0;        // −w·obj (not yet divided by N)
  double dloss_dlogp = 0; // −w·r·A when the unclipped term is active, else 0 (not yet divided by N)
  bool clipped = false;   // the clipped or dual-clipped term is the active one
};

PpoSampleTerms ppo_sample_terms(const PpoConfig& cfg, double logp, double logp_prox, double logp_behav,
                                double advantage);

// GAE over one segment of T transitions of one environment (Schulman et al. 2016):
//   δ_i = r_i + γ·V_{i+1}·(1 − done_i) − V_i,   A_i = δ_i + γλ·(1 − done_i)·A_{i+1}
// with V_T = bootstrap (the value of the state after the segment; ignored when the last
// transition ends the episode). Returns A; returns = A + V.
void gae(const std::vector<float>& rewards, const std::vector<uint8_t>& dones, const std::vector<float>& values,
         float bootstrap, double gamma, double lambda, std::vector<float>& advantages, std::vector<float>& returns);

// Mean 0, std 1 over `a` (the update's advantages; std guarded by 1e-8).
void normalise_advantages(std::vector<float>& a);

}  // namespace emb
