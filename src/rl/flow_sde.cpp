#include "rl/flow_sde.hpp"

#include <cmath>

#include "core/error.hpp"

namespace emb {

FlowTransition flow_sde_transition(int k, int K, double noise_level) {
  EMB_CHECK(K >= 1 && k >= 0 && k < K, "flow_sde_transition: step ", k, " of ", K);
  const double delta = 1.0 / K, t = double(k) / K;
  // σ_t = a·sqrt((1 − t)/t); the first step (t = 0) divides by δ instead (RLinf's convention).
  const double sigma = noise_level * std::sqrt((1.0 - t) / (k == 0 ? delta : t));
  const double c_data = t + delta;
  const double c_noise = 1.0 - t - delta - sigma * sigma * delta / (2.0 * (1.0 - t));
  FlowTransition tr;
  tr.alpha = c_data + c_noise;
  tr.beta = c_data * (1.0 - t) - c_noise * t;
  tr.std = sigma * std::sqrt(delta);
  return tr;
}

double transition_log_prob(const FlowTransition& tr, const float* x, const float* v, const float* x_next,
                           const float* mask, int64_t n) {
  EMB_CHECK(tr.std > 0, "transition_log_prob: a deterministic transition (std 0) has no density");
  const double log_norm = -std::log(tr.std) - 0.5 * std::log(2.0 * M_PI);
  double sum = 0;
  for (int64_t e = 0; e < n; ++e) {
    if (mask[e] == 0.0f) continue;
    const double z = (double(x_next[e]) - (tr.alpha * x[e] + tr.beta * v[e])) / tr.std;
    sum += log_norm - 0.5 * z * z;
  }
  return sum;
}

double chain_log_prob(int k_first, int k_count, int K, double noise_level, const float* chain, const float* v,
                      const float* mask, int64_t n) {
  double sum = 0;
  for (int j = 0; j < k_count; ++j)
    sum += transition_log_prob(flow_sde_transition(k_first + j, K, noise_level), chain + j * n, v + j * n,
                               chain + (j + 1) * n, mask, n);
  return sum;
}

void transition_target_velocity(const FlowTransition& tr, const float* x, const float* x_next, float* v_target,
                                int64_t n) {
  EMB_CHECK(tr.beta != 0, "transition_target_velocity: the transition does not depend on v (beta = 0)");
  for (int64_t e = 0; e < n; ++e) v_target[e] = float((double(x_next[e]) - tr.alpha * x[e]) / tr.beta);
}

double log_prob_curvature(const FlowTransition& tr) {
  EMB_CHECK(tr.std > 0, "log_prob_curvature: a deterministic transition (std 0) has no density");
  return tr.beta * tr.beta / (tr.std * tr.std);
}

}  // namespace emb
