// Gated residuals of the DiT block (MODEL.md): x += gate·y (gate null: x += y). The gate is
// per token with row stride ld_gate (a chunk of the [T, 6D] modulation), as in
// kernels/cpu/modulate.hpp.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

template <class T>
void gated_residual_forward(T* x, const T* gate, int64_t ld_gate, const T* y, int64_t N, int C, cudaStream_t stream);
// dy += dx·gate (or dx); dgate += dx·y   (dy, dgate may be null)
template <class T>
void gated_residual_backward(const T* gate, int64_t ld_gate, const T* y, const T* dx, T* dy, T* dgate, int64_t N,
                             int C, cudaStream_t stream);

}  // namespace emb::cuda
