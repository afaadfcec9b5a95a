#include "train/backend.hpp"

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#ifdef EMBTRAIN_CUDA_KERNELS
#include <cuda_runtime_api.h>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/cuda_ops.hpp"
#endif
#include "model/presets.hpp"

namespace emb {
namespace {

bool on_cuda(const Deck& deck) { return deck.get_string("run.device") == "cuda"; }

}  // namespace

void check_backend(const Deck& deck) {
  if (!on_cuda(deck)) return;
#ifdef EMBTRAIN_CUDA_KERNELS
  for (int hd : model_config_from_deck(deck).attention_head_dims())
    if (!cuda::attention_head_dim_built(hd))
      throw Error(str(where_set(deck, "model.preset"), ": run.device = cuda: attention head dim ", hd,
                      " (a width divided by its heads) is not built on CUDA (", cuda::attention_head_dims_text(),
                      "); change the model's heads or widths, or use run.device = cpu"),
                  kExitInput);
#else
  throw Error(str(where_set(deck, "run.device"),
                  ": run.device = cuda, but this embtrain was built without the CUDA backend (no nvcc when "
                  "CMake configured it); rebuild with nvcc on the PATH (or -DEMBTRAIN_CUDA=ON), or "
                  "-DEMBTRAIN_CUDA=EMULATE to run CUDA on the CPU emulation, or use run.device = cpu"),
              kExitInput);
#endif
  if (deck.get_string("model.fp8") == "on")
    throw Error(str(where_set(deck, "model.fp8"),
                    ": model.fp8 = on: the model's linears do not use the FP8 GEMMs yet (kernels/cuda/fp8_gemm "
                    "is tested alone); use model.fp8 = off"),
                kExitInput);
}

std::unique_ptr<Ops> make_backend(const Deck& deck, const World& world) {
  if (!on_cuda(deck)) return std::make_unique<CpuOps>();
#ifdef EMBTRAIN_CUDA_KERNELS
  int n_devices = 0;
  if (cudaGetDeviceCount(&n_devices) != cudaSuccess) n_devices = 0;
  return std::make_unique<CudaOps>(device_for_local_rank(world.local_rank, n_devices));
#else
  (void)world;
  check_backend(deck);
  return nullptr;
#endif
}

BufferMemory backend_buffer_memory(const Deck& deck) {
#if defined(EMBTRAIN_CUDA_KERNELS) && !defined(EMBTRAIN_CUDA_EMULATED)
  if (on_cuda(deck)) return BufferMemory::device;
#else
  (void)deck;
#endif
  return BufferMemory::host;
}

}  // namespace emb
