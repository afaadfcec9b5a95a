// Hopper warpgroup tensor-core instructions (wgmma, sm_90a) as thin wrappers, used the same way
// under nvcc (inline PTX) and under the emulation (emu/warpgroup_mma.hpp), in the style of
// mma.cuh. A warpgroup is 4 aligned warps (threads 128i .. 128i + 127); every wrapper here is
// called by all of its threads.
//
// wgmma_ss<N, TRANS_B>(d, desc_a, desc_b, scale_d) / wgmma_rs<N, TRANS_B>(d, a, desc_b, scale_d):
// D [64][N] = A [64][16] · B [16][N] + (scale_d ? D : 0), bf16 in, fp32 accumulate; A through a
// shared-memory descriptor (K-major) or from registers, B through a descriptor, K-major
// (TRANS_B = 0: each 16-byte row holds 8 consecutive k of one column n) or N-major (TRANS_B = 1:
// 8 consecutive n of one k). N ∈ {48, 64, 128}, and 24, 32 for wgmma_ss (the ones instantiated for
// nvcc).
// Fragments (PTX ISA "Register Fragments", wgmma .m64nNk16; g = lane / 4, t = lane % 4 of warp w
// of the warpgroup): warp w owns rows 16w .. 16w + 15 and, within them, the layouts of
// mma.m16n8k16 (mma.cuh):
//   A (4 registers of two bf16): a[0] = A[16w + g][2t..2t+1], a[1] = A[16w + g + 8][2t..],
//                                a[2] = A[16w + g][2t + 8..], a[3] = A[16w + g + 8][2t + 8..]
//   D (N / 8 × 4 floats):        d[j][0..1] = D[16w + g][8j + 2t .. 8j + 2t + 1],
//                                d[j][2..3] = D[16w + g + 8][8j + 2t ..]
// so d is laid out as mma_tiles.cuh's accumulators (for_each_element applies per warp).
// Matrix descriptor (wgmma_descriptor): start address, LBO = bytes between core matrices adjacent
// along K, SBO = bytes between core matrices adjacent along M or N, no swizzle; a core matrix is
// 8 rows of 16 contiguous bytes (128 bytes).
// Ordering (PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): wgmma_fence()
// before the first wgmma of a batch and whenever the thread touched the accumulator or A
// registers since; wgmma_commit() closes a group; wgmma_wait<N>() returns when all but the N
// newest groups are complete. Until then the accumulators must be neither read nor written and
// the shared memory read must not change. wgmma_fence_operand(d) after a wait and before an
// issue keeps the compiler from moving accumulator accesses across them (CUTLASS's
// warpgroup_fence_operand). A shared-memory operand written by ordinary stores (not TMA) needs
// wgmma_fence_shared_writes() by its writers before the barrier after which the wgmma reads it.
// Register budgets (setmaxnreg): warpgroup_release_registers<R>() / warpgroup_claim_registers<R>()
// set the per-thread register count of the calling warpgroup (all 128 threads, R a multiple of 8
// in 24 .. 256), so that a warp-specialised block moves registers from its producer warpgroup to
// its consumers (FA3); the block's launch count (65536 / threads, rounded down per warp
// scheduler) must cover the sum.
#pragma once
#include <cstdint>

#if defined(EMB_CUDA_EMULATE) || (defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL))
// Device code of the Hopper kernels is compiled (sm_90a, or the emulation); elsewhere (sm_80,
// compute_90 PTX, the host pass) their bodies are left out and they are never launched.
#define EMB_HOPPER_DEVICE_CODE 1
#endif

#ifdef EMB_CUDA_EMULATE
#include "kernels/cuda/emu/warpgroup_mma.hpp"

namespace emb::cuda {

inline uint64_t wgmma_descriptor(const void* p, uint32_t lbo, uint32_t sbo) {
  return emu::wgmma_descriptor(p, lbo, sbo);
}
template <int N, int TRANS_B>
inline void wgmma_ss(float (&d)[N / 8][4], uint64_t desc_a, uint64_t desc_b, bool scale_d,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  emu::wgmma_bf16(&d[0][0], N, nullptr, desc_a, desc_b, scale_d, false, TRANS_B != 0, file, line);
}
template <int N, int TRANS_B>
inline void wgmma_rs(float (&d)[N / 8][4], const uint32_t (&a)[4], uint64_t desc_b, bool scale_d,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  emu::wgmma_bf16(&d[0][0], N, a, 0, desc_b, scale_d, false, TRANS_B != 0, file, line);
}
inline void wgmma_fence(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  emu::wgmma_fence(file, line);
}
inline void wgmma_commit() { emu::wgmma_commit(); }
// The async proxy is not modelled (README, CUDA emulation).
inline void wgmma_fence_shared_writes() {}
template <int ROWS>
inline void wgmma_fence_operand(float (&)[ROWS][4]) {}
template <int N>
inline void wgmma_wait(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  emu::wgmma_wait(N, file, line);
}
// Register budgets are not modelled (host threads have no register file).
template <int REGS>
inline void warpgroup_release_registers() {}
template <int REGS>
inline void warpgroup_claim_registers() {}

}  // namespace emb::cuda
#elif defined(EMB_HOPPER_DEVICE_CODE)
namespace emb::cuda {

__device__ __forceinline__ uint64_t wgmma_descriptor(const void* p, uint32_t lbo, uint32_t sbo) {
  const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return uint64_t((address >> 4) & 0x3fffu) | uint64_t((lbo >> 4) & 0x3fffu) << 16 |
         uint64_t((sbo >> 4) & 0x3fffu) << 32;
}

// The PTX of one shape; the accumulators are "+f" operands, so that the compiler keeps them in
// registers across the asynchronous instruction (no copies it could reorder).
template <int N>
struct WgmmaAsm;
template <>
struct WgmmaAsm<24> {  // the atomic backward's dQ halves at hd 48: ss only
  template <int TRANS_B>
  static __device__ __forceinline__ void ss(float (&d)[3][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %14, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n24k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, %12, %13, p, 1, 1, 0, %15;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
  }
};
template <>
struct WgmmaAsm<32> {  // the atomic backward's dQ halves at hd 64: ss only
  template <int TRANS_B>
  static __device__ __forceinline__ void ss(float (&d)[4][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, %19;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
  }
};
template <>
struct WgmmaAsm<48> {
  template <int TRANS_B>
  static __device__ __forceinline__ void ss(float (&d)[6][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %26, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, %24, %25, p, 1, 1, 0, %27;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
  }
  template <int TRANS_B>
  static __device__ __forceinline__ void rs(float (&d)[6][4], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %29, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, {%24, %25, %26, %27}, %28, p, 1, 1, %30;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
  }
};
template <>
struct WgmmaAsm<64> {
  template <int TRANS_B>
  static __device__ __forceinline__ void ss(float (&d)[8][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, %35;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
  }
  template <int TRANS_B>
  static __device__ __forceinline__ void rs(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
  }
};
template <>
struct WgmmaAsm<128> {
  template <int TRANS_B>
  static __device__ __forceinline__ void ss(float (&d)[16][4], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, %67;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
  }
  template <int TRANS_B>
  static __device__ __forceinline__ void rs(float (&d)[16][4], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B));
  }
};

template <int N, int TRANS_B>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 8][4], uint64_t desc_a, uint64_t desc_b, bool scale_d) {
  WgmmaAsm<N>::template ss<TRANS_B>(d, desc_a, desc_b, int(scale_d));
}
template <int N, int TRANS_B>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 8][4], const uint32_t (&a)[4], uint64_t desc_b,
                                         bool scale_d) {
  WgmmaAsm<N>::template rs<TRANS_B>(d, a, desc_b, int(scale_d));
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Makes this thread's ordinary stores to shared memory visible to the async proxy, which wgmma
// reads its descriptor operands through: before the barrier after which another thread's wgmma
// reads them (a tile written by TMA needs none; its mbarrier orders it).
__device__ __forceinline__ void wgmma_fence_shared_writes() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Pins accumulator registers in place around the asynchronous instructions: the compiler may not
// move their reads or writes across it (the wait's "memory" clobber does not cover registers).
template <int ROWS>
__device__ __forceinline__ void wgmma_fence_operand(float (&d)[ROWS][4]) {
#pragma unroll
  for (int j = 0; j < ROWS; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[j][e])::"memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
template <int REGS>
__device__ __forceinline__ void warpgroup_release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void warpgroup_claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

}  // namespace emb::cuda
#endif
