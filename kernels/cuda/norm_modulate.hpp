// Fused LayerNorm / RMSNorm + adaLN modulation (MODEL.md), eps the caller's:
//   x̂ = (x − mean)·rstd (layer) or x·rstd (rms), rstd = 1/√(var (or mean x²) + eps);
//   n = x̂·weight + bias;  y = n·(1 + scale) + shift
// weight/bias null: no affine; scale/shift null: no modulation (plain norm, e.g. RMSNorm of q, k).
// scale/shift are per token with row stride ld_mod, so chunks of one [T, 6D] modulation tensor
// are used in place. Same conventions as kernels/cpu/norm.hpp and modulate.hpp; the forward saves
// mean (layer only) and rstd per row; every gradient accumulates; null gradient = not needed.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

enum class NormKind { layer, rms };

// The residual stream (x, x_in, dx) is of type R: T, or fp32 beside bf16 T (bf16 activations
// keep an fp32 residual stream; the norm's outputs are bf16).
// One block per row reads the row from HBM once (16-byte vectors when every row of every
// operand is 16-byte aligned, else scalar), keeps it in registers (fp32) for the statistics and
// writes the outputs: one pass over HBM where a naive kernel makes three. Rows of at most 8192
// columns (a wider row is an error).
template <class R, class T>
void norm_modulate_forward(NormKind kind, const R* x, const T* weight, const T* bias, const T* scale, const T* shift,
                           int64_t ld_mod, T* y, float* mean, float* rstd, int64_t N, int C, float eps,
                           cudaStream_t stream);

// The DiT block's sublayer boundary in the same pass (MODEL.md): the previous sublayer's gated
// residual x += gate·r (gate null: x += r; r null: no residual, x only read), the sublayer's
// saved input x_in = x (null: not saved), then normed = x̂·weight + bias (the modulation's input
// the backward may keep; null: not written) and y = normed·(1 + scale) + shift of the updated,
// stored x. The unfused sequence gated_residual_forward, copy, norm_modulate_forward gives the
// same values (each element of x is rounded to R once, before the statistics read it).
template <class R, class T>
void residual_norm_modulate_forward(NormKind kind, R* x, const T* gate, int64_t ld_gate, const T* r, R* x_in,
                                    const T* weight, const T* bias, const T* scale, const T* shift, int64_t ld_mod,
                                    T* normed, T* y, float* mean, float* rstd, int64_t N, int C, float eps,
                                    cudaStream_t stream);

// dx += ∂y/∂x·dy; dweight, dbias (column sums); dscale += dy·n; dshift += dy. One block per row
// as the forward's: it reads x, dy and scale once and keeps x̂ and dn·weight in registers for
// the dx pass (rows of at most 8192 columns). The parameter gradients dweight and dbias are of
// type G: T, or fp32 beside bf16 T, summed by column_sum.cuh in column_sum_scratch
// (kColumnSumScratchBytes of device memory, e.g. Blas::column_sum_scratch; only read with
// dweight or dbias).
template <class R, class T, class G>
void norm_modulate_backward(NormKind kind, const R* x, const T* weight, const T* bias, const T* scale, int64_t ld_mod,
                            const float* mean, const float* rstd, const T* dy, R* dx, G* dweight, G* dbias, T* dscale,
                            T* dshift, int64_t N, int C, void* column_sum_scratch, cudaStream_t stream);

}  // namespace emb::cuda
