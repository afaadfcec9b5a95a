// Storage types of the CUDA kernels: tensors live in memory as fp32 or bf16, all math is fp32
// (reductions fp32 or double). Device-only helpers shared by the kernel sources.
#pragma once
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>

namespace emb::cuda {

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__device__ __forceinline__ T from_f32(float x);
template <>
__device__ __forceinline__ float from_f32<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// dst += value, rounded once to the storage type (every backward accumulates).
template <class T>
__device__ __forceinline__ void add_to(T* dst, float value) {
  *dst = from_f32<T>(to_f32(*dst) + value);
}

// Grid for a grid-stride loop over n elements (capped: the loop covers the rest).
inline unsigned grid_for(int64_t n, int threads) {
  return unsigned(std::max<int64_t>(1, std::min<int64_t>((n + threads - 1) / threads, 1 << 16)));
}

}  // namespace emb::cuda

// Explicit instantiation for both storage types: X(float) X(__nv_bfloat16).
#define EMB_CUDA_FOR_STORAGE(X) X(float) X(__nv_bfloat16)
