#include "kernels/cpu/packed_tile.hpp"

#include <immintrin.h>

namespace emb::cpu::packed {

namespace {
__mmask16 lanes(int64_t n) { return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1); }
}  // namespace

bool avx512() {
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
}

__attribute__((target("avx512f"))) void micro_tile(int64_t kc, const float* A, const float* B, float* y, int64_t ldy,
                                                   int rows, int64_t width, bool accumulate) {
  const __mmask16 m0 = lanes(width), m1 = lanes(width - 16);
  __m512 c0[kMr], c1[kMr];
#pragma GCC unroll 12
  for (int r = 0; r < kMr; ++r) c0[r] = _mm512_setzero_ps(), c1[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_loadu_ps(B), b1 = _mm512_loadu_ps(B + 16);
#pragma GCC unroll 12
    for (int r = 0; r < kMr; ++r) {
      const __m512 a = _mm512_set1_ps(A[r * kKc]);
      c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
    }
    A += 1, B += kNr;
  }
  for (int r = 0; r < rows; ++r) {
    float* out = y + r * ldy;
    if (accumulate) {
      c0[r] = _mm512_add_ps(c0[r], _mm512_maskz_loadu_ps(m0, out));
      c1[r] = _mm512_add_ps(c1[r], _mm512_maskz_loadu_ps(m1, out + 16));
    }
    _mm512_mask_storeu_ps(out, m0, c0[r]);
    _mm512_mask_storeu_ps(out + 16, m1, c1[r]);
  }
}

}  // namespace emb::cpu::packed
