#include "kernels/make_ops.hpp"

#include "comm/comm_factory.hpp"
#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#ifdef EMBTRAIN_CUDA_KERNELS
#include <cuda_runtime_api.h>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/cuda_ops.hpp"
#endif

namespace emb {
namespace {

#if defined(EMBTRAIN_CUDA_KERNELS) && !defined(EMBTRAIN_CUDA_EMULATED)
// The GPU `ops` run on: the device CudaOps' constructor made current on this thread; -1 for
// other Ops.
int gpu_of(const Ops& ops) {
  int device = -1;
  if (dynamic_cast<const CudaOps*>(&ops) && cudaGetDevice(&device) != cudaSuccess) device = -1;
  return device;
}
#endif

}  // namespace

bool cuda_backend_built() {
#ifdef EMBTRAIN_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

int visible_gpu_count() {
  int n_devices = 0;
#ifdef EMBTRAIN_CUDA_KERNELS
  if (cudaGetDeviceCount(&n_devices) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: clear the sticky error, report none
    n_devices = 0;
  }
#endif
  return n_devices;
}

bool attention_head_dim_built(Device device, int head_dim) {
#ifdef EMBTRAIN_CUDA_KERNELS
  if (device == Device::cuda) return cuda::attention_head_dim_built(head_dim);
#endif
  (void)device, (void)head_dim;
  return true;
}

std::string cuda_attention_head_dims_text() {
#ifdef EMBTRAIN_CUDA_KERNELS
  return cuda::attention_head_dims_text();
#else
  return "";
#endif
}

std::unique_ptr<Ops> make_ops(const BackendConfig& cfg, int local_rank) {
  if (cfg.device == Device::cpu) return std::make_unique<CpuOps>();
#ifdef EMBTRAIN_CUDA_KERNELS
  return std::make_unique<CudaOps>(device_for_local_rank(local_rank, visible_gpu_count()), cfg.deterministic);
#else
  (void)local_rank;
  throw Error("run.device = cuda, but this embtrain was built without the CUDA backend", kExitInput);
#endif
}

int gpu_compute_capability(const Ops& ops) {
#if defined(EMBTRAIN_CUDA_KERNELS) && !defined(EMBTRAIN_CUDA_EMULATED)
  int major = 0;
  const int gpu = gpu_of(ops);
  if (gpu >= 0 && cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, gpu) == cudaSuccess) return major;
#else
  (void)ops;
#endif
  return -1;
}

std::unique_ptr<Comm> make_comm(const World& world, const CommConfig& cfg, const Ops& ops) {
  CommPlacement placement;
#if defined(EMBTRAIN_CUDA_KERNELS) && !defined(EMBTRAIN_CUDA_EMULATED)
  const int gpu = gpu_of(ops);
  if (gpu >= 0) placement = {BufferMemory::device, gpu, ops.stream()};
#else
  (void)ops;
#endif
  return make_comm(world, cfg, placement);
}

}  // namespace emb
