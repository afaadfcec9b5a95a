// The micro-batches --plan costs: `samples` equal samples laid end to end, as the packer lays
// them (the data's mean context, or the padded context of packing = off). --plan reads their
// token index arrays (attention pairs, tiles, activation rows) for every configuration it costs,
// and a dreamzero14b sample is 28k tokens: rebuilt for each of the config search's ~200
// configurations they were most of a 2-minute plan (perf: index appends, copies and page
// faults). While a PlanBatchScope lives on a thread, each layout's batches are built once there.
#pragma once
#include <cstdint>
#include <memory>

#include "batch/packed_batch.hpp"
#include "config/model_config.hpp"
#include "model/activation_rows.hpp"

namespace emb {

// The sample --plan costs: typical_sample_shape (synthetic_batch.hpp) unless the data's mean
// context length is known (context_tokens > 0); packing = off pads its context with masked
// tokens up to padded_context (the GEMMs run over them, attention skips them).
struct PlanSample {
  int64_t context_tokens = 0;  // 0 = the typical sample's
  int64_t padded_context = 0;  // 0 = no padding
  double context_tokens_std = 0;  // the data's spread of context tokens per sample (0: unknown or none)

  bool operator==(const PlanSample& o) const {
    return context_tokens == o.context_tokens && padded_context == o.padded_context &&
           context_tokens_std == o.context_tokens_std;
  }
};

// The token index arrays of `samples` such samples; with_content: with synthetic features too
// (what the model's dry step uploads), a padded context's padding rows zero. Always built anew.
PackedBatch plan_micro_batch(const ModelConfig& cfg, int samples, const PlanSample& shape, bool with_content = false);

// plan_micro_batch(cfg, samples, shape) (index arrays only), from the thread's scope when one
// lives (built on its first request there), built anew otherwise.
std::shared_ptr<const PackedBatch> plan_batch(const ModelConfig& cfg, int samples, const PlanSample& shape);

// activation_rows of plan_micro_batch(cfg, samples, shape), from its 1- and 2-sample batches:
// each of its counts is affine in the samples (a sample's tokens of each kind and its timesteps,
// plus the timestep the clean tokens share), so no batch of `samples` is built.
ActivationRows plan_activation_rows(const ModelConfig& cfg, int samples, const PlanSample& shape);

// The scope of the memo above on this thread: run_plan, the config search and predict_step
// each open one; a scope opened inside another shares the outer one's batches, and the last
// to close frees them.
class PlanBatchScope {
 public:
  PlanBatchScope();
  ~PlanBatchScope();
  PlanBatchScope(const PlanBatchScope&) = delete;
  PlanBatchScope& operator=(const PlanBatchScope&) = delete;

 private:
  bool outermost_ = false;
};

}  // namespace emb
