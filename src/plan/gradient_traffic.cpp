#include "plan/gradient_traffic.hpp"

#include <algorithm>

#include "parallel/zero3_schedule.hpp"

namespace emb {

GradientTraffic gradient_traffic(ShardMode mode, double n_params, double frozen_params, int ranks, int buckets,
                                 int micro_batches) {
  const double full = 4 * n_params, owned = full / ranks;
  GradientTraffic t;
  switch (mode) {
    case ShardMode::none: t.step_bytes = full; return t;
    case ShardMode::grads: t.step_bytes = full + owned; return t;
    case ShardMode::full: break;
  }
  // A reduction's add reads the owned gradients and the reduced shard and writes the sum.
  const double add_per_micro_batch = 3 * 4 * (n_params - frozen_params) / ranks;
  const int reductions = micro_batches * buckets, at_step_end = std::min(reductions, kGradSlots);
  const double add_at_step_end = add_per_micro_batch * at_step_end / buckets;
  t.backward_bytes = micro_batches * (full + add_per_micro_batch) - add_at_step_end;
  t.step_bytes = owned + add_at_step_end;
  return t;
}

}  // namespace emb
