// adaLN modulation of the DiT block (MODEL.md), the second half of norm + modulate (CpuOps runs
// layernorm_forward of norm.hpp, then this). Scale/shift are per token: row i of `scale` belongs
// to row i of `x`. `ld_mod` is the row stride of the modulation tensors, so chunks of one
// [T, 6D] tensor are used in place without copies.
#pragma once
#include <cstdint>

namespace emb::cpu {

// y = x·(1 + scale) + shift
void modulate_forward(const float* x, const float* scale, const float* shift, int64_t ld_mod, float* y, int64_t N,
                      int C);
// dx += dy·(1 + scale); dscale += dy·x; dshift += dy   (dscale/dshift use stride ld_mod)
void modulate_backward(const float* x, const float* scale, int64_t ld_mod, const float* dy, float* dx, float* dscale,
                       float* dshift, int64_t N, int C);

}  // namespace emb::cpu
