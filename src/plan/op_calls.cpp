#include "plan/op_calls.hpp"

#include <cmath>

namespace emb {

StepCalls step_calls(const ElementwiseWork& micro_batch, int64_t decay_segments, int64_t trained_runs) {
  StepCalls s;
  // A fit's counts are whole numbers up to its arithmetic's rounding.
  s.forward_op_calls_per_micro_batch = std::llround(micro_batch.fwd.op_calls);
  s.backward_op_calls_per_micro_batch = std::llround(micro_batch.bwd.op_calls);
  s.allocations_per_micro_batch = kAllocationsPerOpCall * s.op_calls_per_micro_batch();
  s.optimizer_op_calls = trained_runs + decay_segments;
  return s;
}

}  // namespace emb
