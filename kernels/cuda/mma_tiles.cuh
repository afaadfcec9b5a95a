// Warp-level tile products on the tensor-core wrappers of mma.cuh, for bf16 operands staged in
// shared memory as row-major [rows][STRIDE] (STRIDE = columns + 8: each row padded by 16 bytes
// keeps ldmatrix rows 16-byte aligned and puts the 8 rows of one 8×8 matrix in 8 different
// 4-bank groups, so ldmatrix is free of bank conflicts for 48, 64 and 128 columns).
// Accumulators are fp32 in the mma C layout (mma.cuh): acc[n] is the 16×8 tile of columns
// 8n..8n+7; this lane holds rows g and g+8, columns 2t and 2t+1 (g = lane / 4, t = lane % 4).
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/mma.cuh"

namespace emb::cuda {

// Two floats as the bf16 pair of one fragment register (lower index in the low half).
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat16_raw l = __float2bfloat16_rn(lo), h = __float2bfloat16_rn(hi);
  return uint32_t(l.x) | uint32_t(h.x) << 16;
}

// The bf16 A fragment (mma.m16n8k16's, and wgmma's from registers) of columns 16kk .. 16kk + 15
// of a 16 × N fp32 accumulator: the C layout of n-tiles 2kk and 2kk + 1 is exactly the A layout
// of one 16-wide k-chunk (FlashAttention-2's register reuse of P).
struct AFragment {
  uint32_t a[4];
  AFragment() = default;
  template <int TILES>
  __device__ __forceinline__ AFragment(const float (&acc)[TILES][4], int kk)
      : a{pack_bf16x2(acc[2 * kk][0], acc[2 * kk][1]), pack_bf16x2(acc[2 * kk][2], acc[2 * kk][3]),
          pack_bf16x2(acc[2 * kk + 1][0], acc[2 * kk + 1][1]), pack_bf16x2(acc[2 * kk + 1][2], acc[2 * kk + 1][3])} {}
};

// Calls f(n, e, col) for this lane's elements acc[n][e] of a 16 × N accumulator: column
// 8n + 2t + e % 2 of the tile, row g + 8·(e / 2) of the warp's 16 (the kernels keep their two
// rows' data in arrays indexed by e / 2).
template <int N, class F>
__device__ __forceinline__ void for_each_element(int lane, F f) {
#pragma unroll
  for (int n = 0; n < N / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) f(n, e, 8 * n + 2 * (lane % 4) + e % 2);
}

// acc (16 × N) += A·Bᵀ over K columns: A = the 16 rows at `a`, B = the N rows at `b` (both
// row-major in shared memory). Per 16 columns: one ldmatrix_x4 gives A's fragment (matrices:
// rows 0-7 / 8-15 × columns 0-7 / 8-15, in the order a[0..3] of mma.cuh), and one ldmatrix_x4
// per 16 rows of B gives the B fragments of two n-tiles (B's rows are the mma's n index, so
// the non-transposed 8×8 matrices are already in the col-major B layout).
template <int N, int K, int STRIDE>
__device__ __forceinline__ void warp_mma_abt(float (&acc)[N / 8][4], const __nv_bfloat16* a,
                                             const __nv_bfloat16* b, int lane) {
  static_assert(N % 16 == 0 && K % 16 == 0, "tiles of 16");
  const int i = lane / 8, r = lane % 8;  // this lane addresses row r of 8×8 matrix i
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    uint32_t af[4];
    ldmatrix_x4(af, a + ((i % 2) * 8 + r) * STRIDE + kk * 16 + (i / 2) * 8);
#pragma unroll
    for (int n = 0; n < N / 16; ++n) {
      uint32_t bf[4];
      ldmatrix_x4(bf, b + (n * 16 + (i / 2) * 8 + r) * STRIDE + kk * 16 + (i % 2) * 8);
      const uint32_t b0[2] = {bf[0], bf[1]}, b1[2] = {bf[2], bf[3]};
      mma_m16n8k16_bf16(acc[2 * n], af, b0, acc[2 * n]);
      mma_m16n8k16_bf16(acc[2 * n + 1], af, b1, acc[2 * n + 1]);
    }
  }
}

// acc (16 × D) += P·B: P (16 × N) is an fp32 accumulator of this warp, rounded to bf16 and
// reused in registers as the A operand (the C layout of n-tiles 2kk and 2kk+1 is exactly the
// A layout of k-chunk kk, FlashAttention-2's register reuse); B = the N rows at `b` (row-major
// [n][D] in shared memory), read with ldmatrix .trans since the mma wants it k-major.
template <int N, int D, int STRIDE>
__device__ __forceinline__ void warp_mma_pb(float (&acc)[D / 8][4], const float (&p)[N / 8][4],
                                            const __nv_bfloat16* b, int lane) {
  static_assert(N % 16 == 0 && D % 16 == 0, "tiles of 16");
  const int i = lane / 8, r = lane % 8;
#pragma unroll
  for (int kk = 0; kk < N / 16; ++kk) {
    const AFragment af(p, kk);
#pragma unroll
    for (int d = 0; d < D / 16; ++d) {
      // matrices: k rows 0-7 / 8-15 (i % 2) × columns 0-7 / 8-15 (i / 2): b[0], b[1] of two n-tiles
      uint32_t bf[4];
      ldmatrix_x4_trans(bf, b + (kk * 16 + (i % 2) * 8 + r) * STRIDE + d * 16 + (i / 2) * 8);
      const uint32_t b0[2] = {bf[0], bf[1]}, b1[2] = {bf[2], bf[3]};
      mma_m16n8k16_bf16(acc[2 * d], af.a, b0, acc[2 * d]);
      mma_m16n8k16_bf16(acc[2 * d + 1], af.a, b1, acc[2 * d + 1]);
    }
  }
}

}  // namespace emb::cuda
