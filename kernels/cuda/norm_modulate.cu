#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/norm_modulate.hpp"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr float kEps = 1e-6f;
constexpr int kThreads = 256;

// Per-row view of the operands; one block normalises one row.
template <class T>
struct NormRow {
  const T *weight, *bias;
  __device__ float affine(float xhat, int c) const {
    return (weight ? xhat * to_f32(weight[c]) : xhat) + (bias ? to_f32(bias[c]) : 0.0f);
  }
};

template <class T>
__global__ void __launch_bounds__(kThreads)
    norm_modulate_forward_kernel(bool layer, const T* x, const T* weight, const T* bias, const T* scale,
                                 const T* shift, int64_t ld_mod, T* y, float* mean, float* rstd, int C) {
  __shared__ float scratch[32];
  const int64_t i = blockIdx.x;
  const T* xi = x + i * C;
  float mu = 0.0f;
  if (layer) {
    float s = 0.0f;
    for (int c = threadIdx.x; c < C; c += kThreads) s += to_f32(xi[c]);
    mu = block_sum(s, scratch) / C;
  }
  float ss = 0.0f;
  for (int c = threadIdx.x; c < C; c += kThreads) {
    const float d = to_f32(xi[c]) - mu;
    ss += d * d;
  }
  const float r = 1.0f / sqrtf(block_sum(ss, scratch) / C + kEps);
  if (threadIdx.x == 0) {
    if (mean) mean[i] = mu;
    rstd[i] = r;
  }
  const NormRow<T> row{weight, bias};
  for (int c = threadIdx.x; c < C; c += kThreads) {
    float v = row.affine((to_f32(xi[c]) - mu) * r, c);
    if (scale) v = v * (1.0f + to_f32(scale[i * ld_mod + c])) + to_f32(shift[i * ld_mod + c]);
    y[i * C + c] = from_f32<T>(v);
  }
}

// With g = dn·weight, dn = dy·(1 + scale):
//   layer: dx = rstd·(g − mean(g) − x̂·mean(g·x̂));  rms: dx = rstd·(g − x̂·mean(g·x̂))
template <class T>
__global__ void __launch_bounds__(kThreads)
    norm_modulate_backward_kernel(bool layer, const T* x, const T* weight, const T* bias, const T* scale,
                                  int64_t ld_mod, const float* mean, const float* rstd, const T* dy, T* dx,
                                  T* dscale, T* dshift, int C) {
  __shared__ float scratch[32];
  const int64_t i = blockIdx.x;
  const float mu = layer ? mean[i] : 0.0f, r = rstd[i];
  const NormRow<T> row{weight, bias};
  float g_sum = 0.0f, gx_sum = 0.0f;
  for (int c = threadIdx.x; c < C; c += kThreads) {
    const float xhat = (to_f32(x[i * C + c]) - mu) * r;
    const float d = to_f32(dy[i * C + c]);
    const float dn = scale ? d * (1.0f + to_f32(scale[i * ld_mod + c])) : d;
    if (dscale) add_to(dscale + i * ld_mod + c, d * row.affine(xhat, c));
    if (dshift) add_to(dshift + i * ld_mod + c, d);
    const float g = weight ? dn * to_f32(weight[c]) : dn;
    g_sum += g;
    gx_sum += g * xhat;
  }
  if (!dx) return;  // uniform over the block, so the block sums below stay collective
  const float g_mean = layer ? block_sum(g_sum, scratch) / C : 0.0f;
  const float gx_mean = block_sum(gx_sum, scratch) / C;
  for (int c = threadIdx.x; c < C; c += kThreads) {
    const float xhat = (to_f32(x[i * C + c]) - mu) * r;
    const float d = to_f32(dy[i * C + c]);
    const float dn = scale ? d * (1.0f + to_f32(scale[i * ld_mod + c])) : d;
    const float g = weight ? dn * to_f32(weight[c]) : dn;
    add_to(dx + i * C + c, r * (g - g_mean - xhat * gx_mean));
  }
}

// dn(i, c)·x̂(i, c) (weight gradient) or dn(i, c) (bias gradient), recomputed from the saved stats.
template <class T>
struct NormParamGrad {
  const T *x, *scale, *dy;
  const float *mean, *rstd;
  int64_t ld_mod;
  int C;
  bool with_xhat;
  __device__ float operator()(int64_t i, int c) const {
    const float d = to_f32(dy[i * C + c]);
    const float dn = scale ? d * (1.0f + to_f32(scale[i * ld_mod + c])) : d;
    if (!with_xhat) return dn;
    const float mu = mean ? mean[i] : 0.0f;
    return dn * ((to_f32(x[i * C + c]) - mu) * rstd[i]);
  }
};

}  // namespace

template <class T>
void norm_modulate_forward(NormKind kind, const T* x, const T* weight, const T* bias, const T* scale, const T* shift,
                           int64_t ld_mod, T* y, float* mean, float* rstd, int64_t N, int C, cudaStream_t stream) {
  EMB_CHECK((scale == nullptr) == (shift == nullptr), "norm_modulate: scale and shift go together");
  if (N == 0) return;
  EMB_LAUNCH(norm_modulate_forward_kernel, unsigned(N), kThreads, 0, stream)(
      kind == NormKind::layer, x, weight, bias, scale, shift, ld_mod, y, kind == NormKind::layer ? mean : nullptr,
      rstd, C);
  check_launch("norm_modulate_forward");
}

template <class T>
void norm_modulate_backward(NormKind kind, const T* x, const T* weight, const T* bias, const T* scale, int64_t ld_mod,
                            const float* mean, const float* rstd, const T* dy, T* dx, T* dweight, T* dbias, T* dscale,
                            T* dshift, int64_t N, int C, cudaStream_t stream) {
  if (N == 0) return;
  const bool layer = kind == NormKind::layer;
  const float* mu = layer ? mean : nullptr;
  if (dx || dscale || dshift) {
    EMB_LAUNCH(norm_modulate_backward_kernel, unsigned(N), kThreads, 0, stream)(
        layer, x, weight, bias, scale, ld_mod, mu, rstd, dy, dx, dscale, dshift, C);
    check_launch("norm_modulate_backward");
  }
  if (dweight) column_sum(N, C, dweight, NormParamGrad<T>{x, scale, dy, mu, rstd, ld_mod, C, true}, stream);
  if (dbias) column_sum(N, C, dbias, NormParamGrad<T>{x, scale, dy, mu, rstd, ld_mod, C, false}, stream);
}

#define EMB_INSTANTIATE(T)                                                                                           \
  template void norm_modulate_forward<T>(NormKind, const T*, const T*, const T*, const T*, const T*, int64_t, T*,    \
                                         float*, float*, int64_t, int, cudaStream_t);                                \
  template void norm_modulate_backward<T>(NormKind, const T*, const T*, const T*, const T*, int64_t, const float*,   \
                                          const float*, const T*, T*, T*, T*, T*, T*, int64_t, int, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda
