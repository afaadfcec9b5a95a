// Hopper bulk tensor copies (TMA, sm_90a) and the mbarriers that signal them, as thin wrappers
// used the same way under nvcc (inline PTX) and under the emulation (emu/bulk_copy.hpp).
//
// A tensor map (make_tensor_map, host) describes a global tensor of up to 5 dims (innermost
// first, byte strides of the outer ones, multiples of 16) and the box one copy moves; it is
// passed to the kernel as a `const __grid_constant__ CUtensorMap` parameter. bulk_load_2d
// copies the box at the given coordinates into shared memory (128-byte aligned), densely in
// box order (innermost fastest, no swizzle), with elements outside the tensor as zeros, and
// completes its bytes on an mbarrier. An mbarrier (8 bytes of shared memory) completes a phase
// when its `count` arrivals are in and every byte announced by mbarrier_arrive_expect_tx has
// landed; mbarrier_wait(bar, parity) returns once the phase of that parity has completed
// (phases alternate 0, 1, 0, ...; a wait on the parity before the first phase returns at once).
#pragma once
#include <cuda.h>

#include <cstdint>

#include "kernels/cuda/wgmma.cuh"

#ifdef EMB_CUDA_EMULATE
#include "kernels/cuda/emu/block_scheduler.hpp"
#include "kernels/cuda/emu/bulk_copy.hpp"

namespace emb::cuda {

inline void make_tensor_map(CUtensorMap* map, const void* global, int rank, const uint64_t* dims,
                            const uint64_t* strides_bytes, const uint32_t* box, int element_bytes) {
  emu::encode_tensor_map(map, global, rank, dims, strides_bytes, box, element_bytes);
}
inline void mbarrier_init(uint64_t* bar, unsigned count) { emu::mbarrier_init(bar, count); }
inline void mbarrier_init_fence() {}
inline void mbarrier_arrive(uint64_t* bar) { emu::mbarrier_arrive(bar); }
inline void mbarrier_arrive_expect_tx(uint64_t* bar, unsigned bytes) { emu::mbarrier_arrive_expect_tx(bar, bytes); }
inline void mbarrier_wait(uint64_t* bar, unsigned parity) {
  while (!emu::mbarrier_try_wait_parity(bar, parity)) emu::spin_yield("mbarrier_wait");
}
inline void bulk_load_2d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint64_t* bar) {
  const int32_t coords[2] = {c0, c1};
  emu::bulk_tensor_load(dst, map, coords, 2, bar);
}

}  // namespace emb::cuda
#else
#include <cuda_runtime.h>

#include "core/error.hpp"

namespace emb::cuda {

// cuTensorMapEncodeTiled through the runtime's driver entry point (no link against libcuda):
// bf16 elements, tile mode, no interleave, no swizzle, out-of-bound elements read as zero.
inline void make_tensor_map(CUtensorMap* map, const void* global, int rank, const uint64_t* dims,
                            const uint64_t* strides_bytes, const uint32_t* box, int element_bytes) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      throw Error("make_tensor_map: the driver has no cuTensorMapEncodeTiled (CUDA 12 driver needed)");
    return reinterpret_cast<Encode>(fn);
  }();
  if (element_bytes != 2) throw Error(str("make_tensor_map: ", element_bytes, "-byte elements (bf16 only)"));
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, cuuint32_t(rank), const_cast<void*>(global), dims,
                            strides_bytes, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw Error(str("make_tensor_map: cuTensorMapEncodeTiled failed (CUresult ", int(r), ")"));
}

#ifdef EMB_HOPPER_DEVICE_CODE
__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count) : "memory");
}
// Makes initialised mbarriers visible to the async proxy (the TMA unit) before a copy uses them.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, unsigned parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_address(bar)), "r"(parity)
        : "memory");
}
__device__ __forceinline__ void bulk_load_2d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                             uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_address(bar))
      : "memory");
}
#endif

}  // namespace emb::cuda
#endif
