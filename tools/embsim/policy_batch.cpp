#include "policy_batch.hpp"

#include <algorithm>

#include "batch/sample_tokens.hpp"
#include "core/error.hpp"
#include "data/half.hpp"
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

void integrate_flow(Model& model, const float* params, PackedBatch& batch, int K, StochasticStep* stochastic) {
  const int B = batch.n_samples;
  const size_t per_sample = batch.actions.size() / size_t(std::max(B, 1));
  if (stochastic) {
    EMB_ASSERT(int(stochastic->k_star.size()) == B && stochastic->xi.size() == batch.actions.size());
    stochastic->x_before.assign(batch.actions.size(), 0.f);
    stochastic->x_after.assign(batch.actions.size(), 0.f);
    stochastic->v_before.assign(batch.actions.size(), 0.f);
  }
  const FlowTransition ode = flow_sde_transition(0, K, 0.0);
  std::vector<float> velocity;
  for (int k = 0; k < K; ++k) {
    std::vector<float> tau(size_t(B), float(k) / float(K));
    model.flow_velocity(params, batch, tau, velocity);
    const FlowTransition sde = stochastic ? flow_sde_transition(k, K, stochastic->noise_level) : ode;
    for (int s = 0; s < B; ++s) {
      const bool noisy = stochastic && stochastic->k_star[size_t(s)] == k;
      const FlowTransition& tr = noisy ? sde : ode;
      for (size_t e = s * per_sample; e < (s + 1) * per_sample; ++e) {
        const float x = batch.actions[e];
        float next = float(tr.alpha * x + tr.beta * velocity[e]);
        if (noisy) {
          next += float(tr.std * stochastic->xi[e]);
          stochastic->x_before[e] = x, stochastic->x_after[e] = next, stochastic->v_before[e] = velocity[e];
        }
        batch.actions[e] = next;
      }
    }
  }
}

}  // namespace emb
