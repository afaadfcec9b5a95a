#include "plan/gradient_traffic.hpp"

#include <algorithm>

#include "parallel/zero3_schedule.hpp"

namespace emb {

GradientTraffic gradient_traffic(ShardMode mode, double n_params, double frozen_params, int ranks, int buckets,
                                 int micro_batches, double cache_bytes) {
  const double full = 4 * n_params, owned = full / ranks;
  GradientTraffic t;
  switch (mode) {
    case ShardMode::none: t.step_bytes = full; return t;
    case ShardMode::grads: t.step_bytes = full + owned; return t;
    case ShardMode::full: break;
  }
  // A reduction's add reads the owned gradients and the reduced shard and writes the sum: a
  // bucket's shard is `shard` bytes. Those in the backward pass run between its kernels, every
  // operand from memory; those at the step's end run back to back, and an owned bucket they
  // add into more than once stays in the cache when the owned gradients fit it.
  const double shard = 4 * (n_params - frozen_params) / ranks / buckets;
  const int reductions = micro_batches * buckets, at_step_end = std::min(reductions, kGradSlots);
  const bool owned_cached = 4 * (n_params - frozen_params) / ranks <= cache_bytes;
  const int owned_passes = owned_cached ? std::min(at_step_end, buckets) : at_step_end;
  t.backward_bytes = micro_batches * full + 3 * shard * (reductions - at_step_end);
  t.step_bytes = owned + shard * at_step_end + 2 * shard * owned_passes;
  return t;
}

}  // namespace emb
