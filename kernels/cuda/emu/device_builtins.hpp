// Device-side builtins of CUDA C++ for kernels compiled as host C++: the thread and block
// coordinates of the running fiber, __shared__ storage, __syncthreads, atomics and the math
// intrinsics the kernels use. Intrinsics whose GPU version is approximate (__expf, rsqrtf,
// __fdividef) compute the exact host value: the emulation checks logic, not ulps.
#pragma once
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/emu/block_scheduler.hpp"

// host_defines.h leaves these undefined (or empty) outside nvcc.
#define __launch_bounds__(...)
#undef __grid_constant__
#define __grid_constant__
// Blocks run one after another on one OS thread, so function-static storage is per block.
#undef __shared__
#define __shared__ static
// Dynamic shared memory: `EMB_DYNAMIC_SHARED(float, smem);` in place of
// `extern __shared__ float smem[];` (kernels/cuda/launch.cuh defines it for nvcc).
#define EMB_DYNAMIC_SHARED(type, name) type* name = reinterpret_cast<type*>(::emb::emu::t_block->dynamic_shared)

#define threadIdx (::emb::emu::t_thread->thread_idx)
#define blockIdx (::emb::emu::t_block->block_idx)
#define blockDim (::emb::emu::t_block->block_dim)
#define gridDim (::emb::emu::t_block->grid_dim)
constexpr int warpSize = 32;

inline void __syncthreads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  ::emb::emu::block_barrier(file, line);
}
inline void __threadfence() {}
inline void __threadfence_block() {}

// min/max as CUDA's overloads: both operands converted to their common type.
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(a) < C(b) ? C(b) : C(a);
}

inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline int __float2int_rn(float x) { return int(std::nearbyint(x)); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
template <class T>
inline T __ldg(const T* p) {
  return *p;
}

// Atomics: fibers switch only at barriers and warp collectives, so a plain read-modify-write
// is atomic. The schedule decides the order of concurrent updates (float sums differ between
// schedules: the bit-identity check flags them as a nondeterministic kernel).
template <class T>
inline T atomicAdd(T* p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
// sm_90's 8-byte float2 add: each half added on its own.
inline float2 atomicAdd(float2* p, float2 v) {
  const float2 old = *p;
  p->x = old.x + v.x;
  p->y = old.y + v.y;
  return old;
}
template <class T>
inline T atomicSub(T* p, T v) {
  const T old = *p;
  *p = old - v;
  return old;
}
template <class T>
inline T atomicMax(T* p, T v) {
  const T old = *p;
  *p = old < v ? v : old;
  return old;
}
template <class T>
inline T atomicMin(T* p, T v) {
  const T old = *p;
  *p = v < old ? v : old;
  return old;
}
template <class T>
inline T atomicExch(T* p, T v) {
  const T old = *p;
  *p = v;
  return old;
}
template <class T>
inline T atomicCAS(T* p, T compare, T v) {
  const T old = *p;
  if (old == compare) *p = v;
  return old;
}
inline unsigned atomicInc(unsigned* p, unsigned limit) {
  const unsigned old = *p;
  *p = old >= limit ? 0u : old + 1u;
  return old;
}
