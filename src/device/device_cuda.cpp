// The CUDA device: one GPU per rank (local rank modulo visible GPUs), cudaMalloc'd memory
// (never managed memory), one compute stream that kernels and copies are ordered on.
#include <cuda_runtime.h>

#include "core/error.hpp"
#include "device/device.hpp"

namespace emb {
namespace {

void check_cuda(cudaError_t status, const char* what) {
  EMB_CHECK(status == cudaSuccess, "cuda: ", what, ": ", cudaGetErrorString(status));
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal) {
    check_cuda(cudaSetDevice(ordinal), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CudaDevice() override {
    for (auto& [ptr, bytes] : live()) cudaFree(ptr);
    cudaStreamDestroy(stream_);
  }
  std::string name() const override { return str("cuda:", ordinal_); }
  bool is_host() const override { return false; }
  void* alloc(size_t bytes) override {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, bytes), "cudaMalloc");
    remember(p, bytes);
    return p;
  }
  void free(void* ptr) override {
    if (!ptr) return;
    forget(ptr);
    check_cuda(cudaFree(ptr), "cudaFree");
  }
  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "copy to device");
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "copy to host");
    synchronize();
  }
  void synchronize() override { check_cuda(cudaStreamSynchronize(stream_), "synchronize"); }

 private:
  int ordinal_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

int cuda_device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::unique_ptr<Device> make_cuda_device(int local_rank) {
  int n = cuda_device_count();
  EMB_CHECK(n > 0, "run.device = cuda but no CUDA device is visible (check CUDA_VISIBLE_DEVICES and the driver)");
  return std::make_unique<CudaDevice>(local_rank % n);
}

}  // namespace emb
