#include "plan/op_calls.hpp"

namespace emb {
namespace {

int64_t model_op_calls(const ModelConfig& c) {
  if (c.family == Family::wan) return 66 + 73 * int64_t(c.n_layers);
  const int64_t dropout = c.dropout > 0 ? 1 : 0, dropout_vl = c.dropout_vl > 0 ? 1 : 0;
  return 64 + (39 + 12 * dropout) * int64_t(c.n_layers) + (33 + 12 * dropout_vl) * int64_t(c.n_layers_vl);
}

}  // namespace

StepCalls step_calls(const ModelConfig& c, int64_t decay_segments, int64_t trained_runs) {
  StepCalls s;
  s.op_calls_per_micro_batch = model_op_calls(c);
  s.allocations_per_micro_batch = kAllocationsPerOpCall * s.op_calls_per_micro_batch;
  s.optimizer_op_calls = trained_runs + decay_segments;
  return s;
}

}  // namespace emb
