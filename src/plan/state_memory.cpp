#include "plan/state_memory.hpp"

#include <algorithm>

#include "parallel/data_parallel.hpp"
#include "train/optimizer.hpp"

namespace emb {

double state_bytes_per_rank(const ParamRegistry& reg, ShardMode mode, int ranks, const PlanSharding& sharding,
                            bool bf16_compute) {
  const int distinct_ranks = mode == ShardMode::none ? 1 : ranks;  // DDP: every rank holds the same
  int64_t most = 0;
  for (int r = 0; r < distinct_ranks; ++r) {
    const ShardLayout layout(reg, mode, r, ranks, sharding.bucket_bytes, sharding.frozen);
    most = std::max(most, DataParallelBuffers::of(layout, bf16_compute).bytes() + Optimizer::device_bytes(layout));
  }
  return double(most);
}

}  // namespace emb
