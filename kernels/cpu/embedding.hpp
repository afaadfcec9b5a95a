// Sinusoidal embeddings (MODEL.md `sinus(t, n)`): for k < n/2, f_k = exp(-ln(10000)·k/(n/2)),
// out = [cos(t·f), sin(t·f)], cos half first. The input is a timestep, never a learned
// tensor, so there is no backward.
#pragma once
#include <cstdint>

namespace emb::cpu {

// out[i, 0:n] = sinus(t_i, n) with t_i = t[i·t_cols] (+ t[i·t_cols + 1] when t_cols = 2: a
// timestep that is not an fp32 value, as the sum of two, added in double)
void sinus_embedding(const float* t, int t_cols, float* out, int64_t rows, int n);

}  // namespace emb::cpu
