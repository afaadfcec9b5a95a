// The backend-neutral communicator (DESIGN.md "Parallelism"): asynchronous collectives that
// return a handle to wait on where the data is needed. Every rank must issue the same
// collectives in the same order; a Comm is driven by one caller thread.
// Sharded collectives split n elements with shard_range() (uneven splits allowed).
#pragma once
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

 private:
  CommHandle checked_issue(const Collective& c);
};

}  // namespace emb
