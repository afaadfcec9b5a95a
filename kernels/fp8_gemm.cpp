#include "kernels/fp8_gemm.hpp"

#include <algorithm>
#include <vector>

#include "kernels/fp8_e4m3.hpp"
#include "kernels/fp8_quantize.hpp"

namespace emb {

namespace {

// The values of n codes, unscaled (scratch of the GEMM: decoding once, not per product).
std::vector<float> code_values(const uint8_t* codes, int64_t n) {
  float table[256];
  for (int c = 0; c < 256; ++c) table[c] = decode_e4m3(uint8_t(c));
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = table[codes[i]];
  return v;
}

}  // namespace

void fp8_gemm(const uint8_t* x_codes, const float* x_scales, const uint8_t* w_codes, const float* w_scales, float* y,
              int64_t T, int64_t O, int64_t K, float beta) {
  const int64_t k_blocks = fp8_blocks(K);
  const std::vector<float> x = code_values(x_codes, T * K), w = code_values(w_codes, O * K);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t o = 0; o < O; ++o) {
      const float* xr = x.data() + t * K;
      const float* wr = w.data() + o * K;
      const float* sx = x_scales + t * k_blocks;
      const float* sw = w_scales + o / kFp8BlockEdge * k_blocks;
      float acc = 0.0f;
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        float partial = 0.0f;
        for (int64_t k = kb * kFp8BlockEdge; k < std::min(K, (kb + 1) * kFp8BlockEdge); ++k) partial += xr[k] * wr[k];
        acc += partial * (sx[kb] * sw[kb]);
      }
      float& out = y[t * O + o];
      out = beta == 0.0f ? acc : acc + beta * out;
    }
}

}  // namespace emb
