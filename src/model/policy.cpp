// The gr00t action head as a policy (CLOSED_LOOP.md "The policy in the loop", "RL for a
// flow-matching action head"). Training's forward computes the encoders' input
// x = (1 − τ)ε + τ·a from its draws; here the draws are given instead: flow_velocity sets them
// so that input is the given chunk (ε = a = x) and runs the forward only; RL's
// accumulate_flow_regression regresses v towards a − ε with per-element weights, on the same
// forward and backward as supervised training, so policy, RL and SFT are one code path.
#include "core/error.hpp"
#include "model/model.hpp"

namespace emb {

void Model::set_explicit_draws(const PackedBatch& batch, const std::vector<float>& tau,
                               const std::vector<float>& noise) {
  EMB_CHECK(cfg_.family == Family::gr00t && batch.family == "gr00t", "flow policy: needs a gr00t model and batch");
  const int B = batch.n_samples, Hz = cfg_.horizon, A = cfg_.action_dim;
  EMB_ASSERT(int(tau.size()) == B && int64_t(batch.actions.size()) == int64_t(B) * Hz * A &&
             noise.size() == batch.actions.size());
  EMB_CHECK(ops_ != nullptr, "flow policy: a model made without a backend (Ops)");
  build_token_layout(cfg_, batch, layout_);
  draws_.tau = tau;
  draws_.tq.resize(size_t(B));
  for (int s = 0; s < B; ++s) draws_.tq[size_t(s)] = timestep_bucket(tau[size_t(s)]);
  draws_.noise = noise;
  draws_.temb_t.assign(size_t(batch.n_tokens), 0.0f);
  for (int64_t t = 0; t < batch.n_tokens; ++t)
    if (batch.seq[size_t(t)] >= 0) draws_.temb_t[size_t(t)] = float(draws_.tq[size_t(batch.seq[size_t(t)])]);
  build_time_rows(draws_.temb_t, {}, time_rows_);
  prepare(batch, DType::f32);
  // The policy is the deterministic network (upstream's eval mode); RL's regression trains that
  // same network, so its gradient is the policy's.
  trunk_.set_dropout(false, 0, 0);
}

void Model::flow_velocity(const float* params, const PackedBatch& batch, const std::vector<float>& tau,
                          std::vector<float>& velocity) {
  set_explicit_draws(batch, tau, batch.actions);  // ε = a = x: the encoders' input is x
  ParamAccess access(reg_, params, nullptr, nullptr, unit_param_dtypes(), frozen_);
  run(access, false, batch, 0, loss_counts(batch));
  take_loss();  // the head's loss against the batch's placeholder actions means nothing here
  const int B = batch.n_samples, Hz = cfg_.horizon, A = cfg_.action_dim;
  std::vector<float> v(layout_.action.size() * size_t(A));
  ops_->download(v.data(), action_output(), v.size() * sizeof(float));
  velocity.assign(size_t(B) * Hz * A, 0.0f);
  for (size_t r = 0; r < layout_.action.size(); ++r) {
    const int32_t t = layout_.action[r];
    const int64_t off = (int64_t(batch.seq[size_t(t)]) * Hz + layout_.kind_index[size_t(t)]) * A;
    for (int k = 0; k < A; ++k) velocity[size_t(off + k)] = v[r * size_t(A) + size_t(k)];
  }
}

void Model::accumulate_flow_regression(const float* params, float* grads, const PackedBatch& batch,
                                       const std::vector<float>& tau, const std::vector<float>& noise,
                                       double denominator) {
  set_explicit_draws(batch, tau, noise);
  ParamAccess access(reg_, params, grads, nullptr, unit_param_dtypes(), frozen_);
  run(access, true, batch, 0, {denominator});
}

}  // namespace emb
