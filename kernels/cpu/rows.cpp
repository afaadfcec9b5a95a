#include "kernels/cpu/rows.hpp"

#include <cstring>

namespace emb::cpu {

void copy_rows(const float* src, int64_t ld_src, const int32_t* src_rows, float* dst, int64_t ld_dst,
               const int32_t* dst_rows, int64_t n, int64_t C) {
#pragma omp parallel for if (n * C >= (1 << 15))
  for (int64_t r = 0; r < n; ++r) {
    const int64_t s = src_rows ? src_rows[r] : r, d = dst_rows ? dst_rows[r] : r;
    std::memcpy(dst + d * ld_dst, src + s * ld_src, size_t(C) * sizeof(float));
  }
}

void add_rows(const float* src, int64_t ld_src, const int32_t* src_rows, float* dst, int64_t ld_dst,
              const int32_t* dst_rows, int64_t n, int64_t C) {
  for (int64_t r = 0; r < n; ++r) {
    const float* s = src + (src_rows ? src_rows[r] : r) * ld_src;
    float* d = dst + (dst_rows ? dst_rows[r] : r) * ld_dst;
    for (int64_t c = 0; c < C; ++c) d[c] += s[c];
  }
}

void add(const float* a, int64_t ld_a, const float* b, int64_t ld_b, float* y, int64_t ld_y, int64_t N, int64_t C) {
#pragma omp parallel for if (N * C >= (1 << 15))
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < C; ++c) y[i * ld_y + c] = a[i * ld_a + c] + b[i * ld_b + c];
}

void zero_rows(float* y, int64_t ld_y, int64_t N, int64_t C) {
  if (ld_y == C) {
    std::memset(y, 0, size_t(N * C) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < N; ++i) std::memset(y + i * ld_y, 0, size_t(C) * sizeof(float));
}

}  // namespace emb::cpu
