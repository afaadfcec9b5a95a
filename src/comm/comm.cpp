#include "comm/comm.hpp"

#include "comm/host_collectives.hpp"
#include "core/error.hpp"

namespace emb {

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::barrier: return "barrier";
  }
  return "?";
}

CommHandle Comm::checked_issue(const Collective& c) {
  EMB_ASSERT(c.n >= 0);
  EMB_ASSERT(c.root >= 0 && c.root < size());
  return issue(c);
}

CommHandle Comm::all_reduce(void* data, int64_t n, DType t, ReduceOp op) {
  return checked_issue({CollectiveKind::all_reduce, t, op, data, data, n, 0});
}

CommHandle Comm::reduce_scatter(const void* full, void* shard, int64_t n, DType t, ReduceOp op) {
  const char* f = static_cast<const char*>(full);
  const char* s = static_cast<const char*>(shard);
  const int64_t full_bytes = n * int64_t(dtype_size(t));
  const int64_t shard_bytes = shard_range(n, rank(), size()).count * int64_t(dtype_size(t));
  EMB_ASSERT(shard_bytes == 0 || s + shard_bytes <= f || f + full_bytes <= s);
  return checked_issue({CollectiveKind::reduce_scatter, t, op, full, shard, n, 0});
}

CommHandle Comm::all_gather(const void* shard, void* full, int64_t n, DType t) {
  return checked_issue({CollectiveKind::all_gather, t, ReduceOp::sum, shard, full, n, 0});
}

CommHandle Comm::broadcast(void* data, int64_t n, DType t, int root) {
  return checked_issue({CollectiveKind::broadcast, t, ReduceOp::sum, data, data, n, root});
}

CommHandle Comm::barrier() { return checked_issue({CollectiveKind::barrier}); }

void Comm::sum_over_ranks(double* values, int n) { emb::sum_over_ranks(host_, values, n); }
int64_t Comm::max_over_ranks(int64_t value) { return emb::max_over_ranks(host_, value); }
int64_t Comm::min_over_ranks(int64_t value) { return emb::min_over_ranks(host_, value); }

}  // namespace emb
