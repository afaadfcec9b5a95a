// The CUDA execution model on the host: a grid runs block after block (in the order of the
// current Schedule); the threads of a block run as fibers on one OS thread, and a fiber gives
// the CPU away only at a block barrier (__syncthreads), a warp collective (shuffles, votes,
// __syncwarp, the tensor-core wrappers) or an explicit yield point (cp.async waits). Misuse
// that is undefined behaviour on a GPU (a barrier some thread never reaches, a warp collective
// with a partial mask or with lanes elsewhere) raises a Fault naming the kernel, block,
// thread and call site.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace emb::emu {

// A misuse of the execution model found while running a kernel.
struct Fault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Order in which blocks of a grid, and ready threads of a block, are run. Two schedules must
// give bit-identical results for a kernel without races (tests/kernels/cuda/test_support.hpp runs
// both).
// warps_run_ahead: the lanes of a warp released from a warp collective or a cp.async wait run
// again before any other thread, so each warp runs on to its next __syncthreads before the
// next warp starts (otherwise released threads queue behind the ready ones and warps advance
// in near lockstep, one collective at a time). This exposes a barrier missing between one
// warp's writes and another warp's reads of the same tile when the gap between them spans many
// collectives, e.g. after cp_async_wait (other threads' copies not yet performed) or before
// the next tile's loads overwrite a buffer other warps still read.
enum class Order { forward, reverse, shuffled };
struct Schedule {
  Order order = Order::forward;
  uint64_t seed = 0;  // for Order::shuffled
  bool warps_run_ahead = false;
};
void set_schedule(Schedule s);
Schedule current_schedule();
const char* schedule_name(Schedule s);

// A cp.async copy of 16 bytes not yet performed (async_copy.hpp); group −1: not committed.
struct AsyncCopy {
  void* dst;
  const void* src;
  int group;
};

// 16 bytes of shared memory as an asynchronous reader saw them at its issue.
struct SharedChunk {
  const char* at;
  char bytes[16];
};

// A wgmma.mma_async in flight (warpgroup_mma.hpp): its result lands in the count registers at d
// at the issuing thread's wgmma wait, which first checks that those registers still hold
// `expected` and that the shared memory it read (`read`, shared by the warpgroup) is unchanged;
// group −1: not committed.
struct AsyncMma {
  float* d;
  int count, group;
  std::vector<float> expected, result;
  std::shared_ptr<const std::vector<SharedChunk>> read;
  const char* file;
  int line;
};

// A bulk (TMA) copy in flight (bulk_copy.hpp): the bytes it read, for `dst`; landing completes
// bytes.size() bytes of the transaction count of the mbarrier at `barrier`.
struct BulkCopy {
  char* dst;
  std::vector<char> bytes;
  void* barrier;
  unsigned phase;  // the mbarrier's phase parity at issue: the phase whose expected bytes count it
};

// What device code sees of the running thread and its block.
struct ThreadState {
  uint3 thread_idx;
  int linear;  // x + y·Dx + z·Dx·Dy
  std::vector<AsyncCopy> async_copies;
  int groups_committed = 0;
  std::vector<AsyncMma> async_mmas;
  int mma_groups_committed = 0;
  bool mma_fenced = false;  // a wgmma.fence since this thread last took its registers back
};
struct BlockState {
  uint3 block_idx;
  dim3 block_dim, grid_dim;
  char* dynamic_shared;
  size_t dynamic_shared_bytes;
  mutable std::vector<BulkCopy> bulk_copies;  // issued, not yet landed
};
extern thread_local ThreadState* t_thread;
extern thread_local const BlockState* t_block;

// Runs body() once per thread of every block of the grid (blocks one at a time).
void run_grid(const char* kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
              const std::function<void()>& body);

// __syncthreads: every thread of the block must arrive, at the same call site.
void block_barrier(const char* file, int line);

// A warp collective named `what`: every lane of the warp must call it with the full mask and
// from the same call site. When the last lane arrives, combine(in, out) runs once with the 32
// lanes' pointers (in[lane], out[lane]), then every lane resumes.
using Combine = void (*)(const void* const* in, void* const* out);
void warp_collective(const char* what, const char* file, int line, unsigned mask, const void* in, void* out,
                     Combine combine);

// A warpgroup collective (wgmma): the 128 threads of the 4 aligned warps of the calling
// thread's warpgroup must call it from the same call site; combine(in, out) gets 128 lanes.
void warpgroup_collective(const char* what, const char* file, int line, const void* in, void* out, Combine combine);

// Lets the other ready threads of the block run first (used by cp.async waits); with
// warps_run_ahead the thread goes on at once.
void yield_thread();

// A spin-wait step (mbarrier waits): the other ready threads run first under every schedule.
// A thread that spins again with nothing else having happened in the block (every ready thread
// spinning: a deadlock) faults naming `what`. note_progress() tells the scheduler that a
// spinning thread's condition may have changed (an mbarrier arrival).
void spin_yield(const char* what);
void note_progress();

// A Fault naming the running kernel, block and thread.
[[noreturn]] void device_fault(const std::string& message);

}  // namespace emb::emu
