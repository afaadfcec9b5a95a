// Sinusoidal embedding (MODEL.md, kernels/op_types.hpp SinusConfig), as kernels/cpu/embedding.hpp:
// for k < n/2, f_k = exp(−ln(10000)·k/(n/2 − freq_shift)), out = [cos(t·f), sin(t·f)] (cos_first)
// or [sin(t·f), cos(t·f)]. Angles reach ~10³ rad, so they are formed and reduced in double. No
// backward (the input is a timestep).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

// out[i, 0:n] = the sinusoid of t_i over n columns, t_i = t[i·t_cols] (+ t[i·t_cols + 1] when
// t_cols = 2, added in double: a timestep that is not an fp32 value)
template <class T>
void sinus_embedding(const float* t, int t_cols, T* out, int64_t rows, int n, bool cos_first, int freq_shift,
                     cudaStream_t stream);

}  // namespace emb::cuda
