// Vector access for the memory-bound kernels: V consecutive elements of storage type T move as
// one load or store of V·sizeof(T) bytes (bf16×8 and fp32×4: 16 bytes, ld.global.v4 under nvcc;
// bf16×4: 8 bytes), converted to or from fp32 in registers. The address must be aligned to
// V·sizeof(T). V = 1 is the scalar path for data that is not.
#pragma once
#include <cstdint>
#include <initializer_list>

#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

template <class T>
constexpr int kVectorWidth = 16 / int(sizeof(T));

template <class T, int V>
struct alignas(V * sizeof(T)) VectorOf {
  T v[V];
};

// out[j] = p[j], j < V: one load (p aligned to V·sizeof(T)).
template <int V, class T>
__device__ __forceinline__ void load_vector(const T* p, float (&out)[V]) {
  const VectorOf<T, V> vec = *reinterpret_cast<const VectorOf<T, V>*>(p);
#pragma unroll
  for (int j = 0; j < V; ++j) out[j] = to_f32(vec.v[j]);
}

// p[j] = in[j] rounded to T, j < V: one store (p aligned to V·sizeof(T)).
template <int V, class T>
__device__ __forceinline__ void store_vector(T* p, const float (&in)[V]) {
  VectorOf<T, V> vec;
#pragma unroll
  for (int j = 0; j < V; ++j) vec.v[j] = from_f32<T>(in[j]);
  *reinterpret_cast<VectorOf<T, V>*>(p) = vec;
}

// True when p is a multiple of `bytes` (null is); a row of a tensor may start anywhere in it, so
// callers also check that row strides are multiples of the vector width.
__host__ __device__ inline bool vector_aligned(const void* p, unsigned bytes = 16) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// True when every row of every operand of a [rows, C] kernel starts 16-byte aligned, so it can
// take V columns at a time (kVectorWidth<T>, or kMixedVectorWidth for mixed storage types): C and
// each row stride (0 for an absent operand) a multiple of V, each pointer aligned.
template <int V>
bool rows_vectorizable(int C, std::initializer_list<int64_t> strides, std::initializer_list<const void*> pointers) {
  if (C % V) return false;
  for (int64_t s : strides)
    if (s % V) return false;
  for (const void* p : pointers)
    if (!vector_aligned(p)) return false;
  return true;
}

}  // namespace emb::cuda
