// Gated residuals of the DiT block (MODEL.md): x += gate·y (gate null: x += y). The gate is
// per token with row stride ld_gate (a chunk of the [T, 6D] modulation), as in
// kernels/cpu/residual.hpp.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

// The residual stream x (and its gradient dx) is of type R: T, or fp32 beside bf16 T (bf16
// activations keep an fp32 residual stream, where small per-sublayer updates survive).
template <class R, class T>
void gated_residual_forward(R* x, const T* gate, int64_t ld_gate, const T* y, int64_t N, int C, cudaStream_t stream);
// dy += dx·gate (or dx); dgate += dx·y   (dy, dgate may be null)
template <class R, class T>
void gated_residual_backward(const T* gate, int64_t ld_gate, const T* y, const R* dx, T* dy, T* dgate, int64_t N,
                             int C, cudaStream_t stream);

}  // namespace emb::cuda
