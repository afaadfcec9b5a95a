// The backend-neutral communicator (DESIGN.md "Parallelism"): asynchronous collectives that
// return a handle to wait on where the data is needed. Every rank must issue the same
// collectives in the same order; a Comm is driven by one caller thread.
// Sharded collectives split n elements with shard_range() (uneven splits allowed).
#pragma once
#include <mpi.h>

#include <cstdint>

#include "comm/collective.hpp"
#include "comm/comm_handle.hpp"
#include "comm/shard_range.hpp"
#include "core/dtype.hpp"

namespace emb {

class Comm {
 public:
  virtual ~Comm() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const char* name() const = 0;
  // True when an issued collective waits for the work already queued on the compute stream
  // (NCCL). A host backend reads its buffers when issued: a caller whose buffers a stream
  // writes lazily (the CUDA emulation) synchronises that stream first.
  virtual bool ordered_after_compute() const { return false; }
  // Device memory the communication library took when it was set up (NCCL's channels and
  // buffers), which no allocator of ours counts; 0 for host backends.
  virtual size_t device_bytes() const { return 0; }

  // Starts `c`; the buffers must stay untouched until the handle completes.
  virtual CommHandle issue(const Collective& c) = 0;

  // In place over `data` (n elements). bf16 sums are taken in fp32 and rounded once.
  CommHandle all_reduce(void* data, int64_t n, DType t, ReduceOp op);
  // `full` (n elements) reduced over ranks; this rank's shard_range(n) lands in `shard`,
  // which must not overlap `full`.
  CommHandle reduce_scatter(const void* full, void* shard, int64_t n, DType t, ReduceOp op);
  // This rank's shard (shard_range(n) elements) gathered into `full` (n elements); `shard`
  // may be the rank's own piece of `full` (in place).
  CommHandle all_gather(const void* shard, void* full, int64_t n, DType t);
  CommHandle broadcast(void* data, int64_t n, DType t, int root);
  CommHandle barrier();

  // Blocking collectives of a step's host scalars (loss denominators and sums, micro-batch
  // counts, the Σg² of clipping, the stop flag), on the caller's thread: every backend carries
  // them over MPI on the host communicator it was made from (comm/host_collectives.hpp), apart
  // from (and not ordered with) the issued collectives.
  void sum_over_ranks(double* values, int n);
  int64_t max_over_ranks(int64_t value);
  int64_t min_over_ranks(int64_t value);
  MPI_Comm host_comm() const { return host_; }

 protected:
  explicit Comm(MPI_Comm host) : host_(host) {}

 private:
  CommHandle checked_issue(const Collective& c);
  MPI_Comm host_;
};

}  // namespace emb
