#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/async_pipeline.cuh"
#include "kernels/cuda/conv3d.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

using bf16 = __nv_bfloat16;

// The convolution as the kernels read it: GEMM sizes M = output rows, K = taps·Ci, N = Co.
struct Geometry {
  int T, H, W, To, Ho, Wo, kh, kw, st, sh, sw, pad_front, pad_top, pad_left;
  int64_t Ci, Co, M, K;
};

Geometry geometry(const ConvConfig& c, int64_t Ci, int64_t Co) {
  return {c.frames,  c.height,  c.width, c.out_frames(), c.out_height(), c.out_width(),  c.kh, c.kw,
          c.st,      c.sh,      c.sw,    c.pad_front,    c.pad_top,      c.pad_left,     Ci,   Co,
          c.out_rows(), c.taps() * Ci};
}

// An output row's input window: the row of x at tap (dt, dh, dw), or −1 where the tap reads
// the zero padding.
struct Window {
  int64_t clip_row = 0;  // first row of the output's clip in x
  int t0 = 0, h0 = 0, w0 = 0;
  bool valid = false;  // a row of the output (the tile may run past M)
  __device__ Window(const Geometry& g, int64_t m) {
    if (m >= g.M) return;
    valid = true;
    const int wo = int(m % g.Wo), ho = int(m / g.Wo % g.Ho), to = int(m / (int64_t(g.Wo) * g.Ho) % g.To);
    const int64_t clip = m / (int64_t(g.Wo) * g.Ho * g.To);
    clip_row = clip * g.T * g.H * g.W;
    t0 = to * g.st - g.pad_front, h0 = ho * g.sh - g.pad_top, w0 = wo * g.sw - g.pad_left;
  }
  // The x row tap `tap` of this window reads, or −1 (padding, or not an output row).
  __device__ int64_t row(const Geometry& g, int64_t tap) const {
    if (!valid) return -1;
    const int dw = int(tap % g.kw), dh = int(tap / g.kw % g.kh), dt = int(tap / (int64_t(g.kw) * g.kh));
    const int t = t0 + dt, h = h0 + dh, w = w0 + dw;
    if (t < 0 || t >= g.T || h < 0 || h >= g.H || w < 0 || w >= g.W) return -1;
    return clip_row + (int64_t(t) * g.H + h) * g.W + w;
  }
};

// ---- SIMT: 64 × 64 outputs per block, 16-deep K tiles, 4 × 4 per thread ----
constexpr int kSimtTile = 64, kSimtDepth = 16, kSimtThreads = 256;

template <class T>
__global__ void __launch_bounds__(kSimtThreads)
    conv3d_simt_kernel(const T* x, const T* weight, const T* bias, T* y, Geometry g) {
  __shared__ float a_tile[kSimtDepth][kSimtTile + 4];  // [k][m]: a thread's 4 rows are one float4-free read
  __shared__ float b_tile[kSimtDepth][kSimtTile];
  const int tid = threadIdx.x, tm = tid / 16, tn = tid % 16;
  const int64_t m0 = int64_t(blockIdx.x) * kSimtTile, n0 = int64_t(blockIdx.y) * kSimtTile;
  // This thread gathers A at k = tid % 16 for the rows tid / 16 + 16·i.
  const int a_k = tid % kSimtDepth;
  Window windows[4] = {Window(g, m0 + tid / 16), Window(g, m0 + tid / 16 + 16), Window(g, m0 + tid / 16 + 32),
                       Window(g, m0 + tid / 16 + 48)};
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < g.K; k0 += kSimtDepth) {
    const int64_t k = k0 + a_k;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int64_t row = k < g.K ? windows[i].row(g, k / g.Ci) : -1;
      a_tile[a_k][tid / 16 + 16 * i] = row >= 0 ? to_f32(x[row * g.Ci + k % g.Ci]) : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int e = tid + kSimtThreads * i, kr = e / kSimtTile, col = e % kSimtTile;
      b_tile[kr][col] = k0 + kr < g.K && n0 + col < g.Co ? to_f32(weight[(k0 + kr) * g.Co + n0 + col]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kSimtDepth; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = a_tile[kk][tm * 4 + i], b[i] = b_tile[kk][tn * 4 + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t m = m0 + tm * 4 + i;
    if (m >= g.M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t n = n0 + tn * 4 + j;
      if (n < g.Co) y[m * g.Co + n] = from_f32<T>(acc[i][j] + (bias ? to_f32(bias[n]) : 0.0f));
    }
  }
}

// ---- tensor cores: 128 × 128 outputs per block, 8 warps of 32 × 64, K steps of 32 ----
constexpr int kBlockM = 128, kBlockN = 128, kDepth = 32, kStages = 3, kMmaThreads = 256;
constexpr int kStrideA = kDepth + 8, kStrideB = kBlockN + 8;  // padded rows (mma_tiles.cuh)
constexpr int kStageElems = kBlockM * kStrideA + kDepth * kStrideB;
constexpr int kMmaSharedBytes = kStages * kStageElems * int(sizeof(bf16));

__global__ void __launch_bounds__(kMmaThreads)
    conv3d_mma_kernel(const bf16* x, const bf16* weight, const bf16* bias, bf16* y, Geometry g) {
  EMB_DYNAMIC_SHARED(uint4, shared);
  bf16* base = reinterpret_cast<bf16*>(shared);
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / 2, wn = warp % 2;  // the warp's rows wm·32.., columns wn·64..
  const int64_t m0 = int64_t(blockIdx.x) * kBlockM, n0 = int64_t(blockIdx.y) * kBlockN;
  // A: this thread's rows tid / 4 and tid / 4 + 64, chunk (8 channels) tid % 4 of each K step.
  const int a_row = tid / 4, a_chunk = tid % 4;
  const Window windows[2] = {Window(g, m0 + a_row), Window(g, m0 + a_row + 64)};
  // B: rows tid / 16 and tid / 16 + 16 of the K step, chunk tid % 16 of the block's columns.
  const int b_row = tid / 16, b_chunk = tid % 16;
  const auto a_stage = [&](int stage) { return base + stage * kStageElems; };
  const auto b_stage = [&](int stage) { return base + stage * kStageElems + kBlockM * kStrideA; };
  float acc[2][8][4] = {};
  pipeline_allowed_tiles<kStages>(
      (g.K + kDepth - 1) / kDepth, [](int64_t) { return true; },
      [&](int stage, int64_t kt) {
        const int64_t k = kt * kDepth + a_chunk * 8;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          bf16* to = a_stage(stage) + (a_row + 64 * i) * kStrideA + a_chunk * 8;
          const int64_t row = k < g.K ? windows[i].row(g, k / g.Ci) : -1;
          if (row >= 0)
            cp_async_16(to, x + row * g.Ci + k % g.Ci);
          else
            *reinterpret_cast<uint4*>(to) = uint4{0, 0, 0, 0};
        }
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int r = b_row + 16 * i;
          const int64_t kr = kt * kDepth + r, col = n0 + b_chunk * 8;
          bf16* to = b_stage(stage) + r * kStrideB + b_chunk * 8;
          if (kr < g.K && col < g.Co)
            cp_async_16(to, weight + kr * g.Co + col);
          else
            *reinterpret_cast<uint4*>(to) = uint4{0, 0, 0, 0};
        }
      },
      [&](int stage, int64_t) {
        const bf16* a = a_stage(stage) + wm * 32 * kStrideA;
        const bf16* b = b_stage(stage) + wn * 64;
        const int i = lane / 8, r = lane % 8;  // this lane addresses row r of 8×8 matrix i
#pragma unroll
        for (int kk = 0; kk < kDepth / 16; ++kk) {
          uint32_t af[2][4];
#pragma unroll
          for (int mt = 0; mt < 2; ++mt)
            ldmatrix_x4(af[mt], a + (mt * 16 + (i % 2) * 8 + r) * kStrideA + kk * 16 + (i / 2) * 8);
#pragma unroll
          for (int nn = 0; nn < 4; ++nn) {
            uint32_t bf[4];
            ldmatrix_x4_trans(bf, b + (kk * 16 + (i % 2) * 8 + r) * kStrideB + nn * 16 + (i / 2) * 8);
            const uint32_t b0[2] = {bf[0], bf[1]}, b1[2] = {bf[2], bf[3]};
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
              mma_m16n8k16_bf16(acc[mt][2 * nn], af[mt], b0, acc[mt][2 * nn]);
              mma_m16n8k16_bf16(acc[mt][2 * nn + 1], af[mt], b1, acc[mt][2 * nn + 1]);
            }
          }
        }
      });
  const int group = lane / 4, quad = lane % 4;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t m = m0 + wm * 32 + mt * 16 + group + 8 * (e / 2), n = n0 + wn * 64 + nt * 8 + 2 * quad + e % 2;
        if (m < g.M && n < g.Co) y[m * g.Co + n] = __float2bfloat16_rn(acc[mt][nt][e] + (bias ? __bfloat162float(bias[n]) : 0.0f));
      }
}

dim3 grid_of(const Geometry& g, int tile_m, int tile_n) {
  return dim3(unsigned((g.M + tile_m - 1) / tile_m), unsigned((g.Co + tile_n - 1) / tile_n));
}

template <class T>
void launch_simt(const T* x, const T* weight, const T* bias, T* y, const Geometry& g, cudaStream_t stream) {
  EMB_LAUNCH(conv3d_simt_kernel<T>, grid_of(g, kSimtTile, kSimtTile), kSimtThreads, 0, stream)(x, weight, bias, y, g);
}

}  // namespace

bool conv3d_tensor_cores(int64_t Ci, int64_t Co, const void* x, const void* weight, const void* y) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return Ci % 8 == 0 && Co % 8 == 0 && aligned(x) && aligned(weight) && aligned(y);
}

template <class T>
void conv3d_forward(const T* x, int64_t Ci, const T* weight, const T* bias, T* y, int64_t Co, const ConvConfig& cfg,
                    cudaStream_t stream) {
  const Geometry g = geometry(cfg, Ci, Co);
  if (g.M == 0 || Co == 0) return;
  if constexpr (std::is_same_v<T, bf16>) {
    if (conv3d_tensor_cores(Ci, Co, x, weight, y)) {
      check_cuda(cudaFuncSetAttribute(reinterpret_cast<const void*>(conv3d_mma_kernel),
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, kMmaSharedBytes),
                 "conv3d shared memory opt-in");
      EMB_LAUNCH(conv3d_mma_kernel, grid_of(g, kBlockM, kBlockN), kMmaThreads, kMmaSharedBytes, stream)(x, weight,
                                                                                                        bias, y, g);
      check_launch("conv3d_forward");
      return;
    }
  }
  launch_simt(x, weight, bias, y, g, stream);
  check_launch("conv3d_forward");
}

#define EMB_INSTANTIATE(T)                                                                                  \
  template void conv3d_forward<T>(const T*, int64_t, const T*, const T*, T*, int64_t, const ConvConfig&, \
                                  cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entry (kernels/ops.hpp) ----

namespace emb {

void CudaOps::conv3d_forward(const View& x, const View& weight, const View& bias, const View& y,
                             const ConvConfig& cfg) {
  const OpCheck c = check_conv3d(x, weight, bias, y, cfg);
  dispatch(storage(c, {&x, &weight, &bias, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::conv3d_forward(ptr<const T>(x), x.cols, ptr<const T>(weight), ptr<const T>(bias), ptr<T>(y), y.cols, cfg,
                         stream_);
  });
}

}  // namespace emb
