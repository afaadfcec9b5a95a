#include "rl/roles/policy_batch.hpp"

#include <algorithm>

#include "batch/sample_tokens.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "data/packer.hpp"
#include "rl/flow_sde.hpp"

namespace emb {

std::vector<float> executed_mask(const ModelConfig& cfg, int exec_steps, int task_action_dim) {
  std::vector<float> mask(size_t(cfg.horizon) * cfg.action_dim, 0.0f);
  for (int h = 0; h < exec_steps; ++h)
    for (int k = 0; k < task_action_dim; ++k) mask[size_t(h * cfg.action_dim + k)] = 1.0f;
  return mask;
}

PackedBatch pack_policy_batch(const ModelConfig& cfg, const std::vector<PolicyObservation>& obs,
                              const std::string& what) {
  const size_t per_sample = size_t(cfg.horizon) * cfg.action_dim;
  std::vector<Sample> samples(obs.size());
  int64_t tokens = 0;
  for (size_t i = 0; i < obs.size(); ++i) {
    const PolicyObservation& in = obs[i];
    Sample& s = samples[i];
    s.id = int64_t(i);
    s.emb_id = in.embodiment;
    s.query_tokens = sample_query_tokens(cfg, 0);  // gr00t: no latent frames
    s.context_tokens = int64_t(in.vl->size()) / cfg.d_ctx;
    s.context.resize(in.vl->size());
    half_to_float(in.vl->data(), s.context.data(), int64_t(in.vl->size()));
    s.state.assign(size_t(cfg.state_dim), 0.f);
    EMB_ASSERT(in.state->size() <= s.state.size());
    std::copy(in.state->begin(), in.state->end(), s.state.begin());
    s.actions.assign(per_sample, 0.f);
    s.action_mask.assign(per_sample, 1.f);
    tokens += s.tokens();
  }
  PackerConfig packing;
  packing.tokens_per_mb = tokens, packing.lookahead = 0;
  std::vector<PackedBatch> batches = pack_step(samples, cfg, packing, {what});
  EMB_ASSERT(batches.size() == 1);
  return std::move(batches[0]);
}

void StochasticSteps::resize(int B, int K, size_t per) {
  k_first.assign(size_t(B), 0), k_count.assign(size_t(B), 1);
  xi.assign(size_t(B) * size_t(K) * per, 0.f);
  chain.assign(size_t(B) * size_t(K + 1) * per, 0.f);
  velocity.assign(size_t(B) * size_t(K) * per, 0.f);
}

void integrate_flow(Model& model, const float* params, PackedBatch& batch, int K, StochasticSteps* stochastic) {
  const int B = batch.n_samples;
  const size_t per = batch.actions.size() / size_t(std::max(B, 1));
  if (stochastic)
    EMB_ASSERT(int(stochastic->k_first.size()) == B && stochastic->xi.size() == size_t(B) * size_t(K) * per);
  const FlowTransition ode = flow_sde_transition(0, K, 0.0);
  std::vector<float> velocity;
  for (int k = 0; k < K; ++k) {
    std::vector<float> tau(size_t(B), float(k) / float(K));
    model.flow_velocity(params, batch, tau, velocity);
    const FlowTransition sde = stochastic ? flow_sde_transition(k, K, stochastic->noise_level) : ode;
    for (int s = 0; s < B; ++s) {
      const int j = stochastic ? k - stochastic->k_first[size_t(s)] : -1;  // the sample's j-th noisy step
      const bool noisy = stochastic && j >= 0 && j < stochastic->k_count[size_t(s)];
      const FlowTransition& tr = noisy ? sde : ode;
      float* x = &batch.actions[s * per];
      const float* v = &velocity[s * per];
      if (noisy) {
        const size_t row = (size_t(s) * size_t(K) + size_t(j)) * per;
        float* before = &stochastic->chain[(size_t(s) * size_t(K + 1) + size_t(j)) * per];
        std::copy(x, x + per, before);
        std::copy(v, v + per, &stochastic->velocity[row]);
        const float* xi = &stochastic->xi[row];
        for (size_t e = 0; e < per; ++e) x[e] = float(tr.alpha * x[e] + tr.beta * v[e] + tr.std * xi[e]);
        std::copy(x, x + per, before + per);
      } else {
        for (size_t e = 0; e < per; ++e) x[e] = float(tr.alpha * x[e] + tr.beta * v[e]);
      }
    }
  }
}

SdeSteps sde_steps_from_name(const std::string& name) {
  if (name == "one") return SdeSteps::one;
  EMB_CHECK(name == "all", "rl.sde_steps: '", name, "' is not one of one, all");
  return SdeSteps::all;
}

void draw_stochastic_steps(StochasticSteps& sde, SdeSteps which, int b, size_t per, int K, const CounterRng& k_draw,
                           const CounterRng& xi_draw) {
  const bool one = which == SdeSteps::one;
  sde.k_first[size_t(b)] = one ? std::min(K - 1, int(k_draw.uniform(0) * K)) : 0;
  sde.k_count[size_t(b)] = one ? 1 : K;
  float* xi = &sde.xi[size_t(b) * size_t(K) * per];
  xi_draw.normals(0, int64_t(sde.k_count[size_t(b)]) * int64_t(per), xi);
}

}  // namespace emb
