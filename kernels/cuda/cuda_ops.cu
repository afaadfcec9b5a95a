// CudaOps' device memory, stream, graphs and deferred errors: what is not an op. Each op's entry
// is defined in the file of its kernels (op_entry.hpp; kernels/README.md lists them).
#include "kernels/cuda/cuda_ops.hpp"

#include <algorithm>

#include "core/activity.hpp"
#include "core/error.hpp"
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/blas.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_input_slots.hpp"
#include "kernels/cuda/graph_cache.hpp"

namespace emb {

using cuda::check_cuda;

void* DeviceMemory::allocate(size_t bytes, const char* what) {
  void* p = nullptr;
  if (bytes == 0) return p;
  const cudaError_t status = cudaMalloc(&p, bytes);  // 256-byte aligned
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear it, so the next CUDA call does not report it again
    auto amount = [](size_t n) { return n >= 1000000 ? str((n + 999999) / 1000000, " MB") : str((n + 999) / 1000, " kB"); };
    // Where the run was (the phase and step, core/activity.hpp) and what it was allocating.
    const std::string when = current_activity();
    const char* label = current_activity_label();
    throw Error(str("CUDA out of memory", when.empty() ? "" : " in " + when, ": ", label ? label : what, " asked for ",
                    amount(bytes), " with ", amount(in_use_),
                    " held by embtrain on this GPU; lower data.tokens_per_mb, set "
                    "model.recompute = full or train.shard = full, or use more GPUs (embtrain DECK --plan "
                    "estimates the memory per GPU)"));
  }
  check_cuda(status, what);
  sizes_[p] = bytes;
  in_use_ += bytes;
  peak_ = std::max(peak_, in_use_);
  return p;
}

void DeviceMemory::release(void* p) {
  if (!p) return;
  const auto it = sizes_.find(p);
  EMB_ASSERT(it != sizes_.end());
  in_use_ -= it->second;
  sizes_.erase(it);
  check_cuda(cudaFree(p), "cudaFree");
}

DeviceScratch::~DeviceScratch() {
  try {
    for (void* p : retired_) memory_.release(p);
    memory_.release(data_);
  } catch (const std::exception&) {  // a destructor cannot throw; the run already failed
  }
}

void* DeviceScratch::get(size_t bytes, cudaStream_t stream) {
  if (bytes <= bytes_) return data_;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check_cuda(cudaStreamIsCapturing(stream, &capture), "scratch: capture status");
  if (capture == cudaStreamCaptureStatusNone) {
    check_cuda(cudaStreamSynchronize(stream), "scratch: wait for the stream");
    for (void* p : retired_) memory_.release(p);
    retired_.clear();
    memory_.release(data_);
  } else if (data_) {
    retired_.push_back(data_);
  }
  data_ = nullptr;
  bytes_ = 0;
  data_ = memory_.allocate(bytes, "CudaOps scratch");
  bytes_ = bytes;
  return data_;
}

CudaOps::CudaOps(int device, bool deterministic)
    : dq_accumulation_(deterministic ? cuda::DqAccumulation::deterministic : cuda::DqAccumulation::atomic) {
  check_cuda(cudaSetDevice(device), "CudaOps: cudaSetDevice");
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "CudaOps: stream");
  cuda::Blas::Allocator device_memory{[this](size_t bytes, const char* what) { return memory_.allocate(bytes, what); },
                                      [this](void* p) { memory_.release(p); }};
  blas_ = std::make_unique<cuda::Blas>(size_t{32} << 20, std::move(device_memory));
  blas_->workspace(stream_);  // allocated now, never during a graph capture
  keyless_row_ = static_cast<unsigned long long*>(memory_.allocate(sizeof *keyless_row_, "CudaOps: keyless row"));
  check_cuda(cudaMemsetAsync(keyless_row_, 0xff, sizeof *keyless_row_, stream_), "CudaOps: keyless row");
  clock_ = std::make_unique<cuda::EventClock>(stream_);
  wgmma_attention_ = cuda::attention_wgmma_selected(device);
}

CudaOps::~CudaOps() {
  cudaStreamSynchronize(stream_);  // errors cannot be thrown here; the run already ended
  graphs_.reset();
  clock_.reset();
  cudaFree(keyless_row_);
  blas_.reset();
  cudaStreamDestroy(stream_);
}

void* CudaOps::allocate(size_t bytes) { return memory_.allocate(bytes, "CudaOps::allocate"); }
void CudaOps::deallocate(void* p) { memory_.release(p); }
void CudaOps::upload(void* dst, const void* src, size_t bytes) {
  // From pageable memory the copy is staged before the call returns: src may be reused.
  if (bytes) check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "CudaOps::upload");
}
std::unique_ptr<InputSlots> CudaOps::make_input_slots() { return std::make_unique<CudaInputSlots>(stream_, memory_); }
bool CudaOps::begin_graph() {
  if (!graphs_) graphs_ = std::make_unique<cuda::GraphCache>(stream_);
  graphs_->begin();
  return true;
}
void CudaOps::end_graph(const std::vector<int64_t>& key) { graphs_->end(key); }
void CudaOps::abandon_graph() { graphs_->abandon(); }
size_t CudaOps::blas_workspace_bytes() const { return blas_->workspace_bytes(); }
GraphStats CudaOps::graph_stats() const { return graphs_ ? graphs_->stats() : GraphStats{}; }
void CudaOps::download(void* dst, const void* src, size_t bytes) {
  if (bytes) check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "CudaOps::download");
  synchronize();
}
void CudaOps::synchronize() { check_cuda(cudaStreamSynchronize(stream_), "CudaOps::synchronize"); }

void* CudaOps::zeroed_gradient(int64_t n, size_t elem) {
  void* g = gradient_.get(size_t(n) * elem, stream_);
  check_cuda(cudaMemsetAsync(g, 0, size_t(n) * elem, stream_), "CudaOps: zero a gradient");
  return g;
}

void CudaOps::check_deferred_errors() {
  unsigned long long recorded = cuda::kNoKeylessRow;
  download(&recorded, keyless_row_, sizeof recorded);
  if (recorded == cuda::kNoKeylessRow) return;
  check_cuda(cudaMemsetAsync(keyless_row_, 0xff, sizeof recorded, stream_), "CudaOps: reset the keyless row");
  throw Error(cuda::keyless_row_error(recorded));
}

}  // namespace emb
