// The data-parallel layer's own passes over the gradient buffers (src/parallel/data_parallel.cpp),
// which no FLOP, activation or collective accounts for: bytes the planner costs at the memory
// rate. Per step, begin_step zeroes the gradients the micro-batches accumulate into (the flat
// gradients unless ZeRO-3, and the owned shard when sharded). Under ZeRO-3 each micro-batch's
// backward zeroes a gradient slot as long as every bucket (unit_grads), and each reduced shard
// is added into the owned gradients (complete_reduction: two reads, one write) when its slot is
// needed again, or at the step's end (finish_gradients) for the last kGradSlots reductions.
// Frozen buckets are zeroed but never reduced. scaling_cpu on one rank (17.5 MB of gradients, 4
// micro-batches) moves 297.5 MB per step this way: `memset` and `add` were 10.7 % of its step;
// of its 4 adds at the step's end (210 MB) only the 4 shards came from memory, the 17.5 MB it
// adds into staying in the 32 MiB cache (4.3 ms, 49 GB/s at face value; round 23).
#pragma once
#include "parallel/shard_layout.hpp"

namespace emb {

struct GradientTraffic {
  double backward_bytes = 0;  // inside the micro-batches' backward passes (bwd)
  double step_bytes = 0;      // outside them: begin_step's zeroing and finish_gradients' adds (other)
};

// n_params / frozen_params: the model's parameters and those train.tune_* freezes; buckets: the
// communication buckets the parameters are split into; micro_batches: the rank's per step;
// cache_bytes: the rank's share of the last-level cache (0: none).
GradientTraffic gradient_traffic(ShardMode mode, double n_params, double frozen_params, int ranks, int buckets,
                                 int micro_batches, double cache_bytes);

}  // namespace emb
