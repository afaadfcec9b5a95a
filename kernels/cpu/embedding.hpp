// Sinusoidal embeddings (MODEL.md, kernels/op_types.hpp SinusConfig): for k < n/2,
// f_k = exp(-ln(10000)·k/(n/2 − freq_shift)), out = [cos(t·f), sin(t·f)] (cos_first) or
// [sin(t·f), cos(t·f)]. The input is a timestep, never a learned tensor, so there is no backward.
#pragma once
#include <cstdint>

namespace emb::cpu {

// out[i, 0:n] = the sinusoid of t_i over n columns, t_i = t[i·t_cols] (+ t[i·t_cols + 1] when
// t_cols = 2: a timestep that is not an fp32 value, as the sum of two, added in double)
void sinus_embedding(const float* t, int t_cols, float* out, int64_t rows, int n, bool cos_first, int freq_shift);

}  // namespace emb::cpu
