// y[T, O] = X·Wᵀ + beta·y through cuBLASLt's block-scaled FP8 GEMM (sm_90, cuBLAS ≥ 12.9), the GPU
// version of kernels/fp8_gemm.hpp: X [T, K] in 1×128 tiles, W [O, K] in 128×128 blocks,
// codes and scales as fp8_quantize.hpp lays them out; fp32 accumulation with the scales applied
// per 128-long k-block; output fp32 or bf16 (beta = 0 leaves y unread).
// Hopper's FP8 kernels take only the "TN" layout: A transposed and B not, both with K
// contiguous, which a row-major [rows, K] operand is. y row-major [T, O] is column-major
// D [O, T] = op(A)·B with A = W (column-major [K, O], transposed; BLK128x128_32F scales) and
// B = X (column-major [K, T]; VEC128_32F scales).
// Requirements, checked (emb::Error): K and O multiples of 16 (FP8 columns and output columns
// 16-byte aligned), T a multiple of 4 (each k-block's VEC128 scales, T floats, start 16-byte
// aligned: pad a ragged token count with zero rows), operands and scales 16-byte aligned.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/blas.hpp"

namespace emb::cuda {

template <class Out>
void fp8_gemm(const Blas& blas, const __nv_fp8_e4m3* x_codes, const float* x_scales, const __nv_fp8_e4m3* w_codes,
              const float* w_scales, Out* y, int64_t T, int64_t O, int64_t K, float beta, cudaStream_t stream);

}  // namespace emb::cuda
