#include "rl/ppo.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace emb {

PpoSampleTerms ppo_sample_terms(const PpoConfig& cfg, double logp, double logp_prox, double logp_behav,
                                double advantage) {
  PpoSampleTerms t;
  t.w = std::exp(logp_prox - logp_behav);
  if (!(t.w <= cfg.behav_weight_max)) {  // NaN filtered too
    t.filtered = true;
    return t;
  }
  t.ratio = std::exp(logp - logp_prox);
  const double unclipped = t.ratio * advantage;
  const double clipped = std::clamp(t.ratio, 1.0 - cfg.clip, 1.0 + cfg.clip) * advantage;
  double obj = std::min(unclipped, clipped);
  bool active_unclipped = unclipped <= clipped;
  if (advantage < 0 && obj < cfg.dual_clip * advantage) {  // dual clip: the loss of A < 0 is bounded
    obj = cfg.dual_clip * advantage;
    active_unclipped = false;
  }
  t.loss = -t.w * obj;
  t.clipped = !active_unclipped;
  t.dloss_dlogp = active_unclipped ? -t.w * t.ratio * advantage : 0.0;
  return t;
}

void gae(const std::vector<float>& rewards, const std::vector<uint8_t>& dones, const std::vector<float>& values,
         float bootstrap, double gamma, double lambda, std::vector<float>& advantages, std::vector<float>& returns) {
  const size_t T = rewards.size();
  EMB_CHECK(dones.size() == T && values.size() == T, "gae: ", T, " rewards, ", dones.size(), " dones, ",
            values.size(), " values");
  advantages.assign(T, 0.f);
  returns.assign(T, 0.f);
  double next_value = bootstrap, next_advantage = 0;
  for (size_t i = T; i-- > 0;) {
    const double live = dones[i] ? 0.0 : 1.0;
    const double delta = rewards[i] + gamma * next_value * live - values[i];
    const double a = delta + gamma * lambda * live * next_advantage;
    advantages[i] = float(a);
    returns[i] = float(a + values[i]);
    next_value = values[i];
    next_advantage = a;
  }
}

void normalise_advantages(std::vector<float>& a) {
  if (a.empty()) return;
  double mean = 0, var = 0;
  for (float x : a) mean += x;
  mean /= double(a.size());
  for (float x : a) var += (x - mean) * (x - mean);
  const double inv_std = 1.0 / (std::sqrt(var / double(a.size())) + 1e-8);
  for (float& x : a) x = float((x - mean) * inv_std);
}

}  // namespace emb
