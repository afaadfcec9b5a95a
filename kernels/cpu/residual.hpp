// Gated residuals of the DiT block (MODEL.md). The gate is per token: row i of `gate` belongs to
// row i of `x`, with row stride `ld_gate`, so a chunk of one [T, 6D] modulation tensor is used
// in place without a copy.
#pragma once
#include <cstdint>

namespace emb::cpu {

// x += gate·y  (gate null: x += y)
void gated_residual_forward(float* x, const float* gate, int64_t ld_gate, const float* y, int64_t N, int C);
// dy += dx·gate (or dx); dgate += dx·y
void gated_residual_backward(const float* gate, int64_t ld_gate, const float* y, const float* dx, float* dy,
                             float* dgate, int64_t N, int C);

}  // namespace emb::cpu
