// One optimizer step over this rank's micro-batches: global loss denominators, forward and
// backward of every micro-batch through the data-parallel hooks, gradient reduction,
// global-norm clipping, AdamW, and publication of the new parameters. Shared by the
// trainer and the equivalence tests, so what is tested is what trains.
#pragma once
#include <cstdint>
#include <vector>

#include "core/timer.hpp"
#include "batch/packed_batch.hpp"
#include "model/model.hpp"
#include "parallel/data_parallel.hpp"
#include "train/optimizer.hpp"

namespace emb {

struct StepContext {
  Model& model;
  DataParallel& dp;
  Optimizer& optimizer;
  PhaseTimers& timers;
  Comm& comm;  // its host scalars: the step's sums, counts and norm
  uint64_t seed = 0;
  bool skip_nonfinite = false;  // train.nan_policy = skip
  int64_t inject_nan_step = 0;  // debug.inject_nan_step: rank 0 poisons its gradients then
  double slow_micro_batch_s = 0;  // debug.slow_step_ms: a sleep per micro-batch (regression tests)
};

struct StepResult {
  double loss = 0;  // the global-batch loss
  double grad_norm = 0;
  bool updated = false;  // false when a non-finite step was skipped
  double samples = 0, tokens = 0, computed_tokens = 0;  // global sums
};

StepResult train_step(StepContext& ctx, const std::vector<PackedBatch>& micro_batches, int64_t step, double lr);

}  // namespace emb
