// NCCL backend (built with the CUDA backend only; make_comm picks it for device buffers).
// One communicator per process, its unique id broadcast over MPI; collectives run on the
// Comm's own stream, which first waits for the compute stream (the Ops stream it is made
// with; an event recorded on it at issue), so a collective sees every kernel
// issued before it, overlaps later compute and needs no host thread. A handle's wait()
// blocks the host until the result is final (host consumer); wait_on_compute_stream()
// orders the compute stream after the collective without blocking the host (device consumer).
// Sharded collectives with uneven shards run as grouped per-rank reduces / broadcasts;
// pad unit buffers to a multiple of the rank count to get NCCL's ring kernels.
// bf16 sums use NCCL's bf16 reduction (rounded per step, unlike the MPI backend).
#pragma once
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "comm/comm.hpp"
#include "comm/op_pool.hpp"
#include "comm/world.hpp"

namespace emb {

struct NcclOp;

class NcclComm final : public Comm {
 public:
  // compute: the stream collectives are ordered after (null: the legacy default stream).
  NcclComm(const World& world, int device, void* compute);
  ~NcclComm() override;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "nccl"; }
  bool ordered_after_compute() const override { return true; }
  size_t device_bytes() const override { return device_bytes_; }
  CommHandle issue(const Collective& c) override;

 private:
  void launch(const Collective& c);

  int rank_ = 0, size_ = 1;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t compute_ = nullptr;  // the Ops stream
  float* barrier_word_ = nullptr;   // a barrier is an all-reduce of one float
  size_t device_bytes_ = 0;         // the device's free memory before the set-up less after it
  OpPool<NcclOp> pool_;
};

}  // namespace emb
