// Block-scaled FP8 (E4M3) quantisation on the GPU, as kernels/fp8_quantize.hpp: each block
// keeps the codes of x / s with one fp32 scale s = amax / 448 (1 for a block of zeros), encoded
// to nearest even and saturating to ±448 (__nv_cvt_float_to_fp8 with __NV_SATFINITE), so codes
// and scales equal the CPU reference's bit for bit. Codes are laid out as the input; the scales
// as cuBLASLt's block-scaled GEMM reads them (fp8_gemm.hpp), which is not the CPU layout:
//   1×128 tiles of x [rows, cols]:     [ceil(cols/128), rows]  (VEC128_32F: rows contiguous)
//   128×128 blocks of w [rows, cols]:  [ceil(rows/128), stride], stride = ceil(cols/128) rounded
//                                      up to a multiple of 4, padding 0 (BLK128x128_32F)
// Storage of x: fp32 or bf16; math fp32. Amax is a warp reduction per tile and a block reduction
// per 128×128 block; each block is read twice (amax, then codes), the second time from L2.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

constexpr int64_t kFp8BlockEdge = 128;

inline int64_t fp8_blocks(int64_t n) { return (n + kFp8BlockEdge - 1) / kFp8BlockEdge; }
// Floats of the tile scales of x [rows, cols].
inline int64_t fp8_tile_scale_count(int64_t rows, int64_t cols) { return fp8_blocks(cols) * rows; }
// Row stride of the block scales of w [rows, cols], and their floats.
inline int64_t fp8_block_scale_stride(int64_t cols) { return (fp8_blocks(cols) + 3) / 4 * 4; }
inline int64_t fp8_block_scale_count(int64_t rows, int64_t cols) {
  return fp8_blocks(rows) * fp8_block_scale_stride(cols);
}

template <class T>
void fp8_quantize_tiles(const T* x, int64_t rows, int64_t cols, __nv_fp8_e4m3* codes, float* scales,
                        cudaStream_t stream);
template <class T>
void fp8_quantize_blocks(const T* w, int64_t rows, int64_t cols, __nv_fp8_e4m3* codes, float* scales,
                         cudaStream_t stream);
// x = value(code) · s of its tile or block.
template <class T>
void fp8_dequantize_tiles(const __nv_fp8_e4m3* codes, const float* scales, int64_t rows, int64_t cols, T* x,
                          cudaStream_t stream);
template <class T>
void fp8_dequantize_blocks(const __nv_fp8_e4m3* codes, const float* scales, int64_t rows, int64_t cols, T* x,
                           cudaStream_t stream);

// The 128×128-block quantisation of the transpose [cols, rows] from that of [rows, cols],
// exactly (a square block holds the same elements either way): a weight's forward operand
// W [out, in] and its input-gradient operand Wᵀ from one quantisation.
void fp8_transpose_blocks(const __nv_fp8_e4m3* codes, const float* scales, int64_t rows, int64_t cols,
                          __nv_fp8_e4m3* codes_t, float* scales_t, cudaStream_t stream);

}  // namespace emb::cuda
