// Fused LayerNorm / RMSNorm + adaLN modulation (MODEL.md), eps 1e-6:
//   x̂ = (x − mean)·rstd (layer) or x·rstd (rms);  n = x̂·weight + bias;  y = n·(1 + scale) + shift
// weight/bias null: no affine; scale/shift null: no modulation (plain norm, e.g. RMSNorm of q, k).
// scale/shift are per token with row stride ld_mod, so chunks of one [T, 6D] modulation tensor
// are used in place. Same conventions as kernels/cpu/norm.hpp and modulate.hpp; the forward saves
// mean (layer only) and rstd per row; every gradient accumulates; null gradient = not needed.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

enum class NormKind { layer, rms };

template <class T>
void norm_modulate_forward(NormKind kind, const T* x, const T* weight, const T* bias, const T* scale, const T* shift,
                           int64_t ld_mod, T* y, float* mean, float* rstd, int64_t N, int C, cudaStream_t stream);

// dx += ∂y/∂x·dy; dweight, dbias (column sums); dscale += dy·n; dshift += dy.
template <class T>
void norm_modulate_backward(NormKind kind, const T* x, const T* weight, const T* bias, const T* scale, int64_t ld_mod,
                            const float* mean, const float* rstd, const T* dy, T* dx, T* dweight, T* dbias, T* dscale,
                            T* dshift, int64_t N, int C, cudaStream_t stream);

}  // namespace emb::cuda
