// The block-scaled FP8 GEMM, the reference of the cuBLASLt version (kernels/cuda/fp8_gemm.hpp):
//   y[T, O] = X·Wᵀ + beta·y,   X [T, K] in 1×128 tiles, W [O, K] in 128×128 blocks
// (codes and scales as fp8_quantize.hpp writes them). Per output, the code products of each
// 128-wide k-block are summed in fp32, multiplied by the two scales of that block and added to
// an fp32 accumulator: the scales are applied once per 128 products, as cuBLASLt's VEC128 and
// BLK128x128 scale modes (and DeepSeek-V3's promotion to fp32 every 128 elements) do. Products
// of two E4M3 values are exact in fp32. T, O and K need not be multiples of 128.
// beta = 0 leaves y unread. Single-threaded: the standalone CUDA test links this file without
// OpenMP (kernels/cuda/Makefile), and the test sizes take well under a second.
#pragma once
#include <cstdint>

namespace emb {

void fp8_gemm(const uint8_t* x_codes, const float* x_scales, const uint8_t* w_codes, const float* w_scales, float* y,
              int64_t T, int64_t O, int64_t K, float beta);

}  // namespace emb
