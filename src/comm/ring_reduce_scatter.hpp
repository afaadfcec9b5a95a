// Ring reduce-scatter over MPI point-to-point messages (DESIGN.md "Own ring reduce-scatter").
// Open MPI 4.1's non-blocking reduce-scatter (libnbc) reduces to rank 0 and scatters from
// there, so rank 0's core does every sum and every send. In the ring each of the P-1 steps has
// every rank send one shard_range piece to rank+1 and receive one from rank-1: every rank sends
// and sums (P-1)/P of the buffer, the bandwidth-optimal amount, spread evenly.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "config/comm_config.hpp"

namespace emb {

// Whether the ring beats libnbc for a reduce-scatter of `full_bytes` (the summed type's bytes of
// the full buffer) over `ranks`. At 2 ranks the ring is one exchange against libnbc's reduce and
// then scatter: faster at every size measured (64 KiB to 32 MiB). At 3-4 ranks its P-1 dependent
// steps cost more than libnbc's tree below ~512 KiB (64 KiB at 4 ranks: 0.105 ms against
// 0.089 ms; 3 ranks: 0.54 against 0.39), and win from there (512 KiB at 4 ranks: 0.25 against 0.55).
constexpr int64_t kRingMinFullBytes = int64_t(512) << 10;
inline bool ring_reduce_scatter_pays(int64_t full_bytes, int ranks) {
  return ranks == 2 || full_bytes >= kRingMinFullBytes;
}

class RingReduceScatter {
 public:
  // `comm` carries only this object's messages while a collective runs (MpiComm's own
  // duplicate, used by one thread at a time), so one fixed tag cannot match other traffic.
  RingReduceScatter(MPI_Comm comm, CommProgress progress);

  // Sums `full` (n elements of float, or double when f64) over the ranks; this rank's
  // shard_range(n) lands in `shard`. Each element of shard c is summed in the fixed order
  // ((x[c+1] + x[c+2]) + ...) + x[c], ranks mod P: the same bits on every run, and at 2 ranks
  // the same as any other order (a + b = b + a).
  void reduce_scatter_sum(const void* full, void* shard, int64_t n, bool f64);

 private:
  template <class T>
  void reduce_scatter(const T* full, T* shard, int64_t n, MPI_Datatype type);
  // Sends `send_count` elements to rank+1 and receives `recv_count` from rank-1, then waits.
  void exchange(const void* send, int send_count, void* recv, int recv_count, MPI_Datatype type, const char* what);
  int ring_rank(int steps_back) const { return ((rank_ - steps_back) % size_ + size_) % size_; }

  MPI_Comm comm_;
  CommProgress progress_;
  int rank_ = 0, size_ = 1;
  std::vector<char> partial_, incoming_;  // one piece each: the running sum sent on, the one received
};

}  // namespace emb
