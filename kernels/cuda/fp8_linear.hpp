// The linear layer y = x W + b (W [in, out] row-major, MODEL.md) on the FP8 path on the GPU:
// kernels/cpu/fp8_linear.hpp's recipe (its reference), from this folder's quantisation and GEMM:
//   forward   y  = Q₁ₓ₁₂₈(x) · Q₁₂₈ₓ₁₂₈(W) + b      fp8_gemm on Wᵀ's blocks (fp8_transpose_blocks)
//   dgrad     dx += Q₁ₓ₁₂₈(dy) · Q₁₂₈ₓ₁₂₈(W)ᵀ       fp8_gemm on W's blocks as stored
//   wgrad     dW += xᵀ · dy, db += Σ_rows dy       linear_backward, unquantised, in the storage type
// W is quantised on every call (forward and backward each; recompute again): a per-step cache
// of the quantised weight would save those passes over W and is not built yet.
// The FP8 GEMM needs a row count N that is a multiple of 4 and 16-byte aligned operands; a call
// that has neither runs on zero-padded copies in the scratch (rows of zeros quantise to zero
// codes and add nothing), so any packed token count works. in and out: multiples of 16.
// Storage fp32 or bf16; backward outputs accumulate (+=), null gradients are not computed. The
// backward's G, the type of dW and db, is T or fp32 beside bf16 T (bf16 activations: the
// parameter gradients stay fp32, as in linear_backward).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/blas.hpp"

namespace emb::cuda {

// Scratch bytes either call needs for N rows (elem_bytes: the storage type's size).
size_t fp8_linear_scratch_bytes(int64_t N, int64_t in, int64_t out, size_t elem_bytes);

template <class T>
void fp8_linear_forward(const Blas& blas, const T* x, const T* W, const T* b, T* y, int64_t N, int64_t in,
                        int64_t out, void* scratch, cudaStream_t stream);
template <class T, class G>
void fp8_linear_backward(const Blas& blas, const T* x, const T* W, const T* dy, T* dx, G* dW, G* db, int64_t N,
                         int64_t in, int64_t out, void* scratch, cudaStream_t stream);

}  // namespace emb::cuda
