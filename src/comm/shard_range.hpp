// How a flat buffer of n elements is split over ranks (ZeRO/FSDP shards, DESIGN.md
// "Parallelism"): contiguous pieces in rank order, the first n % size ranks holding one
// element more, so any n works on any rank count.
#pragma once
#include <cstdint>

namespace emb {

struct ShardRange {
  int64_t offset = 0;
  int64_t count = 0;
};

inline ShardRange shard_range(int64_t n, int rank, int size) {
  const int64_t base = n / size, extra = n % size;
  const int64_t offset = rank * base + (rank < extra ? rank : extra);
  return ShardRange{offset, base + (rank < extra ? 1 : 0)};
}

}  // namespace emb
