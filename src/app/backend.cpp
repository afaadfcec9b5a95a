#include "app/backend.hpp"

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#ifdef EMBTRAIN_CUDA_KERNELS
#include <cuda_runtime_api.h>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/cuda_ops.hpp"
#endif
#include "model/model.hpp"
#include "model/presets.hpp"

namespace emb {
namespace {

bool on_cuda(const Deck& deck) { return deck.get_string("run.device") == "cuda"; }
bool fp8_on(const Deck& deck) { return deck.get_string("model.fp8") == "on"; }

// model.fp8 = on with no linear on the FP8 path would train exactly as off: refused, so the run
// does not silently measure something else.
void check_fp8_linears(const Deck& deck) {
  const ModelConfig mc = model_config_from_deck(deck);
  if (make_model(mc, nullptr)->fp8_linear_count() > 0) return;
  throw Error(str(where_set(deck, "model.fp8"), ": model.fp8 = on, but no linear is eligible for FP8 (the blocks' "
                  "q, k, v, o, fc1 and fc2 need in and out multiples of 128; d_model is ", mc.d_model,
                  "); set model.d_model (and model.d_ff) to multiples of 128, or model.fp8 = off"),
              kExitInput);
}

}  // namespace

void check_backend(const Deck& deck) {
  if (fp8_on(deck)) check_fp8_linears(deck);
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
}

std::unique_ptr<Ops> make_backend(const Deck& deck, const World& world) {
  if (!on_cuda(deck)) return std::make_unique<CpuOps>();
#ifdef EMBTRAIN_CUDA_KERNELS
  int n_devices = 0;
  if (cudaGetDeviceCount(&n_devices) != cudaSuccess) n_devices = 0;
  const int device = device_for_local_rank(world.local_rank, n_devices);
#ifndef EMBTRAIN_CUDA_EMULATED
  // cuBLASLt's block-scaled FP8 GEMM runs on Hopper (sm_90) and later.
  int major = 0;
  if (fp8_on(deck) && cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
      major < 9)
    throw Error(str(where_set(deck, "model.fp8"), ": model.fp8 = on needs a GPU of compute capability 9.0 or later "
                    "(the block-scaled FP8 GEMM); this one is ", major, ".x; use model.fp8 = off"),
                kExitInput);
#endif
  return std::make_unique<CudaOps>(device, deck.get_string("run.deterministic") == "on");
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
