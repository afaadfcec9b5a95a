#include "plan/state_memory.hpp"

#include <algorithm>

#include "parallel/data_parallel.hpp"
#include "train/optimizer.hpp"

namespace emb {

double state_bytes_per_rank(const ParamRegistry& reg, ShardMode mode, int ranks, const PlanSharding& sharding,
                            bool bf16_compute) {
  // DDP: every rank holds the same. Every tensor trained: rank 0 holds the most (shard_range gives
  // each piece's remainder to the first ranks, and all its owned elements have moments).
  const bool any_frozen = std::find(sharding.frozen.begin(), sharding.frozen.end(), true) != sharding.frozen.end();
  const int distinct_ranks = mode == ShardMode::none || !any_frozen ? 1 : ranks;
  int64_t most = 0;
  for (int r = 0; r < distinct_ranks; ++r) {
    const ShardLayout layout(reg, mode, r, ranks, sharding.bucket_bytes, sharding.frozen);
    most = std::max(most, DataParallelBuffers::of(layout, bf16_compute).bytes() + Optimizer::device_bytes(layout));
  }
  return double(most);
}

}  // namespace emb
