#include "model/model.hpp"

#include "core/error.hpp"
#include "model/activation_plan.hpp"
#include "model/gr00t.hpp"
#include "model/wan.hpp"

namespace emb {

double Model::forward_backward(const float* params, float* grads, const PackedBatch& batch, int64_t step,
                               uint64_t seed, const std::vector<double>& denominators, UnitHooks* hooks) {
  EMB_CHECK(batch.family == family_name(cfg_.family), "packed batch of family '", batch.family, "' for a ",
            family_name(cfg_.family), " model");
  EMB_ASSERT(denominators.size() == loss_counts(batch).size());
  build_token_layout(cfg_, batch, layout_);
  draw_flow(cfg_, batch, layout_, step, seed, draws_);
  build_time_rows(draws_.temb_t, time_rows_);
  if (batch.n_tokens != planned_T_ || batch.n_context != planned_Tc_ || batch.n_samples != planned_B_) {
    ActivationPlan measure(nullptr);
    plan_activations(measure, batch.n_tokens, batch.n_context, batch.n_samples);
    arena_.reserve(measure.bytes());
    arena_.reset();
    ActivationPlan real(&arena_);
    plan_activations(real, batch.n_tokens, batch.n_context, batch.n_samples);
    planned_T_ = batch.n_tokens, planned_Tc_ = batch.n_context, planned_B_ = batch.n_samples;
  }
  ParamAccess access(reg_, params, grads, hooks);
  return run(access, grads != nullptr || hooks != nullptr, batch, denominators);
}

size_t Model::activation_bytes(int64_t T, int64_t Tc, int B) {
  ActivationPlan measure(nullptr);
  plan_activations(measure, T, Tc, B);
  planned_T_ = -1;  // measuring nulled the layout pointers: the next step plans again
  return measure.bytes();
}

std::unique_ptr<Model> make_model(const ModelConfig& cfg) {
  if (cfg.family == Family::gr00t) return std::make_unique<Gr00tModel>(cfg);
  return std::make_unique<WanModel>(cfg);
}

}  // namespace emb
