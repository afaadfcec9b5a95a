// How many times a training step calls into the backend and the host allocator: the counts the
// planner multiplies by the hardware's fixed costs (plan/hardware.hpp FixedCosts). A
// micro-batch's op calls are the dry step's (plan/elementwise_work.hpp), counted as the model's
// code issues them, by pass as the trainer times them: recompute's second forward is the
// backward's, and a new block or op is counted without a change here. A micro-batch's count does
// not depend on its samples (every op runs over the packed rows).
// tests/plan/test_op_calls.cpp counts a real forward + backward through a counting Ops and the
// allocations through a counting operator new.
#pragma once
#include <cstdint>

#include "plan/elementwise_work.hpp"

namespace emb {

struct StepCalls {
  int64_t forward_op_calls_per_micro_batch = 0;
  int64_t backward_op_calls_per_micro_batch = 0;  // with recompute's forward
  int64_t allocations_per_micro_batch = 0;
  // Per step: the optimizer's calls (the gradient's sum of squares per trained run of the owned
  // shard, AdamW per decay segment of it) and train_step's blocking host reductions (loss denominators, micro-batch
  // count, loss sums, gradient norm). The step-end agreement on stop signals
  // (src/app/training_run.cpp) runs after the step's timer, like the logging, and is not counted.
  int64_t optimizer_op_calls = 0;
  int host_reductions = 4;
  int head_host_reductions = 2;  // of them, before the first micro-batch (denominators, count)

  int64_t op_calls_per_micro_batch() const {
    return forward_op_calls_per_micro_batch + backward_op_calls_per_micro_batch;
  }
};

// micro_batch: a micro-batch's dry step (or its fit's); decay_segments: the owned shard's runs of
// one weight decay (ShardLayout::decay_segments); trained_runs: its runs of trained elements
// (ShardLayout::trainable_runs): more than one where frozen tensors cut them.
StepCalls step_calls(const ElementwiseWork& micro_batch, int64_t decay_segments, int64_t trained_runs);

// Host heap allocations per op call in the model's micro-batch (the index arrays and tile
// summaries the host code builds around some calls): 0.50-0.75 measured on gr00t, 1.1-1.3 on wan
// (2.7-3.6 while every op entry's check held a vector and a string and the CPU kernels allocated
// their workspaces per call; 26-30 while the checks built their messages up front).
constexpr int64_t kAllocationsPerOpCall = 1;

}  // namespace emb
