// Ring reduce-scatter and all-gather over MPI point-to-point messages (DESIGN.md "Own ring
// reduce-scatter"). Open MPI 4.1's non-blocking reduce-scatter (libnbc) reduces to rank 0 and
// scatters from there, so rank 0's core does every sum and every send. In the ring each of the
// P-1 steps has every rank send one shard_range piece to rank+1 and receive one from rank-1:
// every rank sends (and, reducing, sums) (P-1)/P of the buffer, the bandwidth-optimal amount.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "config/comm_config.hpp"

namespace emb {

class RingCollectives {
 public:
  // `comm` carries only this object's messages while a collective runs (MpiComm's own
  // duplicate, used by one thread at a time), so one fixed tag cannot match other traffic.
  RingCollectives(MPI_Comm comm, CommProgress progress);

  // Sums `full` (n elements of float, or double when f64) over the ranks; this rank's
  // shard_range(n) lands in `shard`. Each element of shard c is summed in the fixed order
  // ((x[c+1] + x[c+2]) + ...) + x[c], ranks mod P: the same bits on every run, and at 2 ranks
  // the same as any other order (a + b = b + a).
  void reduce_scatter_sum(const void* full, void* shard, int64_t n, bool f64);
  // This rank's piece of `full` (elem_bytes each; shard_range(n) of `full`, already in place)
  // gathered from every rank, in `wire` elements.
  void all_gather(void* full, int64_t n, MPI_Datatype wire, int elem_bytes);

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
