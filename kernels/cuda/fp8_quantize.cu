#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fp8_quantize.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr float kE4M3Max = 448.0f;
constexpr int kThreads = 256;
// A warp covers a 128-wide row slice in four coalesced 32-element steps.
constexpr int kStepsPerSlice = int(kFp8BlockEdge) / 32;

// IEEE division (__fdiv_rn whatever the -prec-div flag), as the CPU reference divides.
__device__ __forceinline__ float block_scale(float amax) {
  const float s = __fdiv_rn(amax, kE4M3Max);
  return s > 0.0f ? s : 1.0f;
}

__device__ __forceinline__ __nv_fp8_e4m3 encode(float x, float s) {
  __nv_fp8_e4m3 code;
  code.__x = __nv_cvt_float_to_fp8(__fdiv_rn(x, s), __NV_SATFINITE, __NV_E4M3);
  return code;
}

// One warp per 1×128 tile: tile t is row t / tiles, columns from (t % tiles)·128.
template <class T>
__global__ void quantize_tiles_kernel(const T* x, int64_t rows, int64_t cols, int64_t tiles, __nv_fp8_e4m3* codes,
                                      float* scales) {
  const int64_t tile = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32;
  if (tile >= rows * tiles) return;  // the whole warp leaves together
  const int lane = threadIdx.x % 32;
  const int64_t r = tile / tiles, kb = tile % tiles;
  float v[kStepsPerSlice];
  float amax = 0.0f;
  for (int j = 0; j < kStepsPerSlice; ++j) {
    const int64_t c = kb * kFp8BlockEdge + j * 32 + lane;
    v[j] = c < cols ? to_f32(x[r * cols + c]) : 0.0f;
    amax = fmaxf(amax, fabsf(v[j]));
  }
  const float s = block_scale(warp_reduce(amax, MaxOp{}));
  for (int j = 0; j < kStepsPerSlice; ++j) {
    const int64_t c = kb * kFp8BlockEdge + j * 32 + lane;
    if (c < cols) codes[r * cols + c] = encode(v[j], s);
  }
  if (lane == 0) scales[kb * rows + r] = s;
}

// One thread block per 128×128 block (blockIdx.x: column block, including the zero padding of
// the scale rows; blockIdx.y: row block); warp w covers rows w, w + 8, ...
template <class T>
__global__ void quantize_blocks_kernel(const T* w, int64_t rows, int64_t cols, __nv_fp8_e4m3* codes, float* scales) {
  __shared__ float scratch[32];
  const int64_t kb = blockIdx.x, rb = blockIdx.y, stride = gridDim.x;
  if (kb * kFp8BlockEdge >= cols) {  // padding: uniform over the block, before any barrier
    if (threadIdx.x == 0) scales[rb * stride + kb] = 0.0f;
    return;
  }
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  const int64_t r_end = min(rows, (rb + 1) * kFp8BlockEdge);
  auto each = [&](auto visit) {
    for (int64_t r = rb * kFp8BlockEdge + threadIdx.x / 32; r < r_end; r += warps)
      for (int j = 0; j < kStepsPerSlice; ++j) {
        const int64_t c = kb * kFp8BlockEdge + j * 32 + lane;
        if (c < cols) visit(r * cols + c);
      }
  };
  float amax = 0.0f;
  each([&](int64_t i) { amax = fmaxf(amax, fabsf(to_f32(w[i]))); });
  const float s = block_scale(block_reduce(amax, scratch, MaxOp{}, 0.0f));
  each([&](int64_t i) { codes[i] = encode(to_f32(w[i]), s); });
  if (threadIdx.x == 0) scales[rb * stride + kb] = s;
}

// Scale index of element (r, c) in the tile and block layouts.
struct TileScaleAt {
  int64_t rows;
  __device__ int64_t operator()(int64_t r, int64_t c) const { return c / kFp8BlockEdge * rows + r; }
};
struct BlockScaleAt {
  int64_t stride;
  __device__ int64_t operator()(int64_t r, int64_t c) const { return r / kFp8BlockEdge * stride + c / kFp8BlockEdge; }
};

template <class T, class ScaleAt>
__global__ void dequantize_kernel(const __nv_fp8_e4m3* codes, const float* scales, int64_t rows, int64_t cols,
                                  ScaleAt scale_at, T* x) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < rows * cols;
       e += int64_t(gridDim.x) * blockDim.x)
    x[e] = from_f32<T>(float(codes[e]) * scales[scale_at(e / cols, e % cols)]);
}

// codes_t[c, r] = codes[r, c] through a 32×32 shared tile (both sides coalesced).
__global__ void transpose_codes_kernel(const __nv_fp8_e4m3* codes, int64_t rows, int64_t cols, __nv_fp8_e4m3* codes_t) {
  __shared__ __nv_fp8_storage_t tile[32][33];
  const int64_t r0 = int64_t(blockIdx.y) * 32, c0 = int64_t(blockIdx.x) * 32;
  for (int j = threadIdx.y; j < 32; j += blockDim.y)
    if (r0 + j < rows && c0 + threadIdx.x < cols) tile[j][threadIdx.x] = codes[(r0 + j) * cols + c0 + threadIdx.x].__x;
  __syncthreads();
  for (int j = threadIdx.y; j < 32; j += blockDim.y)
    if (c0 + j < cols && r0 + threadIdx.x < rows)
      codes_t[(c0 + j) * rows + r0 + threadIdx.x].__x = tile[threadIdx.x][j];
}

// Block scales [grid_rows, stride] → [grid_cols, stride_t], padding 0.
__global__ void transpose_scales_kernel(const float* scales, int64_t grid_rows, int64_t grid_cols, int64_t stride,
                                        int64_t stride_t, float* scales_t) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < grid_cols * stride_t;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = e / stride_t, i = e % stride_t;
    scales_t[e] = i < grid_rows ? scales[i * stride + j] : 0.0f;
  }
}

}  // namespace

template <class T>
void fp8_quantize_tiles(const T* x, int64_t rows, int64_t cols, __nv_fp8_e4m3* codes, float* scales,
                        cudaStream_t stream) {
  const int64_t tiles = fp8_blocks(cols), threads = rows * tiles * 32;
  if (threads == 0) return;
  EMB_LAUNCH(quantize_tiles_kernel, unsigned((threads + kThreads - 1) / kThreads), kThreads, 0, stream)(
      x, rows, cols, tiles, codes, scales);
  check_launch("fp8_quantize_tiles");
}

template <class T>
void fp8_quantize_blocks(const T* w, int64_t rows, int64_t cols, __nv_fp8_e4m3* codes, float* scales,
                         cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const dim3 grid(unsigned(fp8_block_scale_stride(cols)), unsigned(fp8_blocks(rows)));
  EMB_LAUNCH(quantize_blocks_kernel, grid, kThreads, 0, stream)(w, rows, cols, codes, scales);
  check_launch("fp8_quantize_blocks");
}

template <class T>
void fp8_dequantize_tiles(const __nv_fp8_e4m3* codes, const float* scales, int64_t rows, int64_t cols, T* x,
                          cudaStream_t stream) {
  EMB_LAUNCH(dequantize_kernel, grid_for(rows * cols, kThreads), kThreads, 0, stream)(
      codes, scales, rows, cols, TileScaleAt{rows}, x);
  check_launch("fp8_dequantize_tiles");
}

template <class T>
void fp8_dequantize_blocks(const __nv_fp8_e4m3* codes, const float* scales, int64_t rows, int64_t cols, T* x,
                           cudaStream_t stream) {
  EMB_LAUNCH(dequantize_kernel, grid_for(rows * cols, kThreads), kThreads, 0, stream)(
      codes, scales, rows, cols, BlockScaleAt{fp8_block_scale_stride(cols)}, x);
  check_launch("fp8_dequantize_blocks");
}

void fp8_transpose_blocks(const __nv_fp8_e4m3* codes, const float* scales, int64_t rows, int64_t cols,
                          __nv_fp8_e4m3* codes_t, float* scales_t, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const dim3 grid(unsigned((cols + 31) / 32), unsigned((rows + 31) / 32)), block(32, 8);
  EMB_LAUNCH(transpose_codes_kernel, grid, block, 0, stream)(codes, rows, cols, codes_t);
  check_launch("fp8_transpose_blocks (codes)");
  const int64_t stride_t = fp8_block_scale_stride(rows), n = fp8_blocks(cols) * stride_t;
  EMB_LAUNCH(transpose_scales_kernel, grid_for(n, kThreads), kThreads, 0, stream)(
      scales, fp8_blocks(rows), fp8_blocks(cols), fp8_block_scale_stride(cols), stride_t, scales_t);
  check_launch("fp8_transpose_blocks (scales)");
}

#define EMB_INSTANTIATE(T)                                                                                       \
  template void fp8_quantize_tiles<T>(const T*, int64_t, int64_t, __nv_fp8_e4m3*, float*, cudaStream_t);         \
  template void fp8_quantize_blocks<T>(const T*, int64_t, int64_t, __nv_fp8_e4m3*, float*, cudaStream_t);        \
  template void fp8_dequantize_tiles<T>(const __nv_fp8_e4m3*, const float*, int64_t, int64_t, T*, cudaStream_t); \
  template void fp8_dequantize_blocks<T>(const __nv_fp8_e4m3*, const float*, int64_t, int64_t, T*, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda
