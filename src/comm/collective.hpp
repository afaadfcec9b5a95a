// One collective operation as issued by a caller: what every backend executes and what
// the fabric model prices. Buffers are host memory for MPI and device memory for NCCL.
#pragma once
#include <cstdint>

#include "core/dtype.hpp"

namespace emb {

enum class ReduceOp { sum, avg };

enum class CollectiveKind { all_reduce, reduce_scatter, all_gather, broadcast, barrier };

struct Collective {
  CollectiveKind kind = CollectiveKind::barrier;
  DType dtype = DType::f32;
  ReduceOp op = ReduceOp::sum;
  const void* in = nullptr;  // all_reduce/broadcast: same as out (in place)
  void* out = nullptr;
  int64_t n = 0;  // elements of the full buffer (reduce_scatter, all_gather: before sharding)
  int root = 0;   // broadcast only
};

const char* collective_name(CollectiveKind kind);

}  // namespace emb
