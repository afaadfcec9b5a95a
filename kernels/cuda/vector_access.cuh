// 16-byte vector access for the memory-bound kernels: V consecutive elements of storage type T
// (bf16×8, fp32×4) move as one 16-byte load or store (ld.global.v4 under nvcc), converted to
// or from fp32 in registers. V = 1 is the scalar path for rows that are not 16-byte aligned.
#pragma once
#include <cstdint>

#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

template <class T>
constexpr int kVectorWidth = 16 / int(sizeof(T));

template <class T, int V>
struct alignas(V == 1 ? alignof(T) : 16) VectorOf {
  T v[V];
};

// out[j] = p[j], j < V: one 16-byte load when V > 1 (p must then be 16-byte aligned).
template <int V, class T>
__device__ __forceinline__ void load_vector(const T* p, float (&out)[V]) {
  const VectorOf<T, V> vec = *reinterpret_cast<const VectorOf<T, V>*>(p);
#pragma unroll
  for (int j = 0; j < V; ++j) out[j] = to_f32(vec.v[j]);
}

// p[j] = in[j] rounded to T, j < V: one 16-byte store when V > 1.
template <int V, class T>
__device__ __forceinline__ void store_vector(T* p, const float (&in)[V]) {
  VectorOf<T, V> vec;
#pragma unroll
  for (int j = 0; j < V; ++j) vec.v[j] = from_f32<T>(in[j]);
  *reinterpret_cast<VectorOf<T, V>*>(p) = vec;
}

// True when p is null or 16-byte aligned (a row of a tensor may start anywhere in it: the
// caller also checks that every row stride is a multiple of the vector width).
inline bool vector_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace emb::cuda
