// Row copies and sums between the packed token stream and per-kind tensors (the action tokens
// of gr00t's head, the noisy video tokens of wan's head, a timestep's conditioning row, ...).
// Matrices are row-major with a row stride (ld) each, so a column chunk of a wider tensor is
// read or written in place. An index pointer that is null is the identity.
#pragma once
#include <cstdint>

namespace emb::cpu {

// dst[dst_rows[r]] = src[src_rows[r]] for r < n (C columns)
void copy_rows(const float* src, int64_t ld_src, const int32_t* src_rows, float* dst, int64_t ld_dst,
               const int32_t* dst_rows, int64_t n, int64_t C);
// dst[dst_rows[r]] += src[src_rows[r]], in row order (a destination row may repeat)
void add_rows(const float* src, int64_t ld_src, const int32_t* src_rows, float* dst, int64_t ld_dst,
              const int32_t* dst_rows, int64_t n, int64_t C);
// y = a + b over [N, C] (each with its row stride)
void add(const float* a, int64_t ld_a, const float* b, int64_t ld_b, float* y, int64_t ld_y, int64_t N, int64_t C);
// y = 0 over [N, C]
void zero_rows(float* y, int64_t ld_y, int64_t N, int64_t C);

}  // namespace emb::cpu
