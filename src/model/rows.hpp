// Row gathers and scatters between the packed token stream and per-kind tensors (the action
// tokens of gr00t's head, the noisy video tokens of wan's head, ...), and the zeroing of the
// gradient buffers that scatters and backward kernels add into.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

namespace emb {

inline void zero(float* p, int64_t n) { std::memset(p, 0, size_t(n) * sizeof(float)); }

// dst[r] = src[idx[r]] for r < n
inline void gather_rows(const float* src, const std::vector<int32_t>& idx, int64_t C, float* dst) {
  for (size_t r = 0; r < idx.size(); ++r)
    std::memcpy(dst + int64_t(r) * C, src + int64_t(idx[r]) * C, size_t(C) * sizeof(float));
}

// dst[idx[r]] = src[r]
inline void scatter_rows(const float* src, const std::vector<int32_t>& idx, int64_t C, float* dst) {
  for (size_t r = 0; r < idx.size(); ++r)
    std::memcpy(dst + int64_t(idx[r]) * C, src + int64_t(r) * C, size_t(C) * sizeof(float));
}

// dst[idx[r]] += src[r]
inline void scatter_add_rows(const float* src, const std::vector<int32_t>& idx, int64_t C, float* dst) {
  for (size_t r = 0; r < idx.size(); ++r) {
    float* d = dst + int64_t(idx[r]) * C;
    const float* s = src + int64_t(r) * C;
    for (int64_t c = 0; c < C; ++c) d[c] += s[c];
  }
}

}  // namespace emb
