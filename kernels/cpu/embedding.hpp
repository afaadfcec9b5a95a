// Sinusoidal embeddings (MODEL.md, kernels/op_types.hpp SinusConfig): for k < n/2,
// f_k = exp(-ln(10000)·k/(n/2 − freq_shift)), out = [cos(t·f), sin(t·f)] (cos_first) or
// [sin(t·f), cos(t·f)]. The input is a timestep, never a learned tensor, so there is no backward.
#pragma once
#include <cstdint>

namespace emb::cpu {

// out[i, 0:n] = the sinusoid of t[i] over n columns
void sinus_embedding(const float* t, float* out, int64_t rows, int n, bool cos_first, int freq_shift);

}  // namespace emb::cpu
