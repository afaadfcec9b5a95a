// Checkpoints store a linear's weight as nn.Linear does, [out, in] (a convolution [out, c, p, p]
// is the linear [out, c·p·p] over its patch rows); the ops multiply by W [in, out].
#pragma once
#include <cstdint>

namespace emb::encoders {

// Writes stored^T, the [in, out] transpose of `stored` [out, in] (row-major), into columns
// [col, col + out) of `dst`, a row-major [in, dst_cols] matrix (dst_cols = out, col = 0 for a
// plain transpose; wider to set several linears side by side, a fused QKV).
void transpose_linear_into(const float* stored, int64_t out, int64_t in, float* dst, int64_t dst_cols, int64_t col);

}  // namespace emb::encoders
