#include "comm/comm_nccl.hpp"

#include <algorithm>
#include <chrono>

#include "comm/mpi_error.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace emb {

static void cuda_check(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) throw Error(str("CUDA ", call, " failed: ", cudaGetErrorString(rc)));
}

static void nccl_check(ncclResult_t rc, const char* call) {
  if (rc != ncclSuccess) throw Error(str("NCCL ", call, " failed: ", ncclGetErrorString(rc)));
}

static float elapsed_seconds(cudaEvent_t from, cudaEvent_t to) {
  cuda_check(cudaEventSynchronize(to), "cudaEventSynchronize");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return ms * 1e-3f;
}

// Events around one collective: `issued` on the compute stream when it was issued, `done`
// on the comm stream after it, `waited` on the compute stream where a device consumer waited.
struct NcclOp final : CommOp {
  cudaEvent_t issued = nullptr, done = nullptr, waited = nullptr;
  cudaStream_t compute = nullptr;
  bool stream_waited = false;
  double host_blocked = 0;  // seconds wait() held the host

  NcclOp() {
    cuda_check(cudaEventCreate(&issued), "cudaEventCreate");
    cuda_check(cudaEventCreate(&done), "cudaEventCreate");
    cuda_check(cudaEventCreate(&waited), "cudaEventCreate");
  }
  ~NcclOp() override {
    cudaEventDestroy(issued);
    cudaEventDestroy(done);
    cudaEventDestroy(waited);
  }
  bool idle() { return test(); }

  bool test() override {
    const cudaError_t rc = cudaEventQuery(done);
    if (rc == cudaErrorNotReady) return false;
    cuda_check(rc, "cudaEventQuery");
    return true;
  }
  double wait() override {
    const auto t0 = std::chrono::steady_clock::now();
    cuda_check(cudaEventSynchronize(done), "cudaEventSynchronize");
    const double blocked = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    host_blocked += blocked;
    return blocked;
  }
  double wait_on_compute_stream() override {
    if (!stream_waited) {
      cuda_check(cudaEventRecord(waited, compute), "cudaEventRecord");
      cuda_check(cudaStreamWaitEvent(compute, done, 0), "cudaStreamWaitEvent");
      stream_waited = true;
    }
    return 0.0;  // the host is not blocked; the stream stall is exposed_seconds()
  }
  double seconds() override { return elapsed_seconds(issued, done); }
  double exposed_seconds() override {
    if (!stream_waited) return host_blocked;
    cuda_check(cudaEventSynchronize(waited), "cudaEventSynchronize");
    return host_blocked + std::max(0.0f, elapsed_seconds(waited, done));
  }
};

NcclComm::NcclComm(const World& world, int device, void* compute)
    : Comm(world.comm), rank_(world.rank), size_(world.size), compute_(static_cast<cudaStream_t>(compute)) {
  cuda_check(cudaSetDevice(device), "cudaSetDevice");
  cuda_check(cudaFree(nullptr), "cudaFree");  // makes the context first, so its memory is not NCCL's
  size_t free_before = 0, free_after = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free_before, &total), "cudaMemGetInfo");
  ncclUniqueId id;
  if (rank_ == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mpi_check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world.comm), "MPI_Bcast");
  nccl_check(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda_check(cudaMalloc(&barrier_word_, sizeof(float)), "cudaMalloc");
  cuda_check(cudaMemGetInfo(&free_after, &total), "cudaMemGetInfo");
  // Another process on the same GPU may free memory meanwhile: never below zero.
  device_bytes_ = free_before > free_after ? free_before - free_after : 0;
}

NcclComm::~NcclComm() {
  // Errors here cannot be thrown; the process is ending or the run already failed.
  if (cudaStreamSynchronize(stream_) != cudaSuccess) log_warn("NCCL comm stream failed at shutdown");
  ncclCommDestroy(comm_);
  cudaFree(barrier_word_);
  cudaStreamDestroy(stream_);
}

static ncclDataType_t nccl_type(DType t) {
  return t == DType::f64 ? ncclFloat64 : t == DType::f32 ? ncclFloat32 : ncclBfloat16;
}
static ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::avg ? ncclAvg : ncclSum; }

CommHandle NcclComm::issue(const Collective& c) {
  std::shared_ptr<NcclOp> op = pool_.acquire();
  op->compute = compute_;
  op->stream_waited = false;
  op->host_blocked = 0;
  cuda_check(cudaEventRecord(op->issued, compute_), "cudaEventRecord");
  cuda_check(cudaStreamWaitEvent(stream_, op->issued, 0), "cudaStreamWaitEvent");
  launch(c);
  cuda_check(cudaEventRecord(op->done, stream_), "cudaEventRecord");
  return CommHandle(op);
}

void NcclComm::launch(const Collective& c) {
  const ncclDataType_t type = nccl_type(c.dtype);
  const size_t elem = dtype_size(c.dtype);
  const bool even = c.n % size_ == 0;
  const size_t piece = size_t(c.n / size_);
  switch (c.kind) {
    case CollectiveKind::all_reduce:
      nccl_check(ncclAllReduce(c.in, c.out, c.n, type, nccl_op(c.op), comm_, stream_), "ncclAllReduce");
      return;
    case CollectiveKind::reduce_scatter:
      if (even) {
        nccl_check(ncclReduceScatter(c.in, c.out, piece, type, nccl_op(c.op), comm_, stream_),
                   "ncclReduceScatter");
        return;
      }
      nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (int r = 0; r < size_; ++r) {
        const ShardRange s = shard_range(c.n, r, size_);
        const char* from = static_cast<const char*>(c.in) + s.offset * elem;
        nccl_check(ncclReduce(from, c.out, s.count, type, nccl_op(c.op), r, comm_, stream_), "ncclReduce");
      }
      nccl_check(ncclGroupEnd(), "ncclGroupEnd");
      return;
    case CollectiveKind::all_gather:
      if (even) {
        nccl_check(ncclAllGather(c.in, c.out, piece, type, comm_, stream_), "ncclAllGather");
        return;
      }
      nccl_check(ncclGroupStart(), "ncclGroupStart");
      for (int r = 0; r < size_; ++r) {
        const ShardRange s = shard_range(c.n, r, size_);
        char* to = static_cast<char*>(c.out) + s.offset * elem;
        nccl_check(ncclBroadcast(c.in, to, s.count, type, r, comm_, stream_), "ncclBroadcast");
      }
      nccl_check(ncclGroupEnd(), "ncclGroupEnd");
      return;
    case CollectiveKind::broadcast:
      nccl_check(ncclBroadcast(c.in, c.out, c.n, type, c.root, comm_, stream_), "ncclBroadcast");
      return;
    case CollectiveKind::barrier:
      nccl_check(ncclAllReduce(barrier_word_, barrier_word_, 1, ncclFloat32, ncclSum, comm_, stream_),
                 "ncclAllReduce");
      return;
  }
}

}  // namespace emb
