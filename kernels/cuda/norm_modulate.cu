#include <type_traits>

#include "kernels/cuda/blas.hpp"
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/mixed_storage.cuh"
#include "kernels/cuda/norm_modulate.hpp"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"
#include "kernels/cuda/vector_access.cuh"

namespace emb::cuda {

namespace {

// Per-row view of the affine parameters; V consecutive columns at a time.
template <class T, int V>
struct Affine {
  const T *weight, *bias;
  __device__ void apply(int c, const float (&xhat)[V], float (&n)[V]) const {
    float w[V] = {}, b[V] = {};
    if (weight) load_vector<V>(weight + c, w);
    if (bias) load_vector<V>(bias + c, b);
#pragma unroll
    for (int j = 0; j < V; ++j) n[j] = (weight ? xhat[j] * w[j] : xhat[j]) + (bias ? b[j] : 0.0f);
  }
};

// x and x_in (the residual stream) of type R, the rest of T (norm_modulate.hpp).
template <class R, class T>
struct ForwardArgs {
  bool layer;
  R* x;
  const T *gate, *r;
  int64_t ld_gate;
  R* x_in;
  const T *weight, *bias, *scale, *shift;
  int64_t ld_mod;
  T *normed, *y;
  float *mean, *rstd;
  int C;
  float eps;
};

// Both passes hold their row in registers: thread t of a block of `threads` (≤ kRowThreads, a
// multiple of 32) takes the vectors t, t + threads, ..., K of them, so consecutive threads read
// consecutive vectors and each thread holds at most kRowValues fp32 values of the row (the
// forward with its residual, gate, scale and shift: 5·kRowValues; the backward with dy, scale
// and the dx, dscale, dshift it accumulates into: 6·kRowValues). Rows of up to
// kRowThreads·kRowValues columns fit, in every storage (8192: the presets' widths are ≤ 5120).
constexpr int kRowThreads = 512, kRowValues = 16;

// The first column of the thread's k-th vector.
template <int V>
__device__ __forceinline__ int row_column(int k) {
  return (int(threadIdx.x) + k * int(blockDim.x)) * V;
}

// Every load of the row (x, the residual, scale and shift) is issued before the first use, so a
// block waits for one memory round trip; the statistics are two block sums over the registers.
template <class R, class T, int V, int K>
__global__ void __launch_bounds__(kRowThreads) norm_modulate_forward_kernel(ForwardArgs<R, T> a) {
  __shared__ float scratch[32];
  const int64_t i = blockIdx.x;
  const int C = a.C;
  R* xi = a.x + i * C;
  float v[K][V] = {}, rv[K][V] = {}, g[K][V] = {}, sc[K][V] = {}, sh[K][V] = {};
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = row_column<V>(k);
    if (c >= C) continue;
    load_vector<V>(xi + c, v[k]);
    if (a.r) load_vector<V>(a.r + i * C + c, rv[k]);
    if (a.gate) load_vector<V>(a.gate + i * a.ld_gate + c, g[k]);
    if (a.scale) {
      load_vector<V>(a.scale + i * a.ld_mod + c, sc[k]);
      load_vector<V>(a.shift + i * a.ld_mod + c, sh[k]);
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = row_column<V>(k);
    if (c >= C) continue;
    if (a.r) {
#pragma unroll
      for (int j = 0; j < V; ++j) v[k][j] = to_f32(from_f32<R>(v[k][j] + (a.gate ? g[k][j] : 1.0f) * rv[k][j]));
      store_vector<V>(xi + c, v[k]);
    }
    if (a.x_in) store_vector<V>(a.x_in + i * C + c, v[k]);
#pragma unroll
    for (int j = 0; j < V; ++j) s += v[k][j];
  }
  const float mu = a.layer ? block_sum(s, scratch) / C : 0.0f;
  float ss = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (row_column<V>(k) >= C) continue;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const float d = v[k][j] - mu;
      ss += d * d;
    }
  }
  const float r = 1.0f / sqrtf(block_sum(ss, scratch) / C + a.eps);
  if (threadIdx.x == 0) {
    if (a.mean) a.mean[i] = mu;
    a.rstd[i] = r;
  }
  const Affine<T, V> affine{a.weight, a.bias};
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = row_column<V>(k);
    if (c >= C) continue;
    float xhat[V], n[V];
#pragma unroll
    for (int j = 0; j < V; ++j) xhat[j] = (v[k][j] - mu) * r;
    affine.apply(c, xhat, n);
    if (a.normed) store_vector<V>(a.normed + i * C + c, n);
    if (a.scale)
#pragma unroll
      for (int j = 0; j < V; ++j) n[j] = n[j] * (1.0f + sc[k][j]) + sh[k][j];
    store_vector<V>(a.y + i * C + c, n);
  }
}

// Calls launch(std::integral_constant<int, K>, threads) with the fewest vectors per thread K (a
// power of two) that cover a row of C columns with kRowThreads threads, and the fewest whole
// warps that cover it with K: a row of 192 bf16 vectors (C 1536) runs on 6 warps, 384 (C 3072)
// on 12, none idle.
template <int V, int K = 1, class Launch>
void launch_row_blocks(int C, const char* what, const Launch& launch) {
  const int vectors = (C + V - 1) / V;
  if constexpr (K * V < kRowValues) {
    if (K * kRowThreads < vectors) return launch_row_blocks<V, 2 * K>(C, what, launch);
  }
  EMB_CHECK(K * kRowThreads >= vectors, what, ": rows of ", C, " columns exceed the ", kRowThreads * kRowValues,
            " a row block holds in registers");
  const int threads = ((vectors + K - 1) / K + 31) / 32 * 32;
  launch(std::integral_constant<int, K>{}, threads);
  check_launch(what);
}

// x and dx (the residual stream) of type R, the rest of T.
template <class R, class T>
struct BackwardArgs {
  bool layer;
  const R* x;
  const T *weight, *bias, *scale;
  int64_t ld_mod;
  const float *mean, *rstd;
  const T* dy;
  R* dx;
  T *dscale, *dshift;
  int C;
};

// With g = dn·weight, dn = dy·(1 + scale):
//   layer: dx = rstd·(g − mean(g) − x̂·mean(g·x̂));  rms: dx = rstd·(g − x̂·mean(g·x̂))
// As the forward: x̂ and g of the row stay in registers between the row pass and the dx pass,
// and every load of the row (x, dy, scale, and the dx, dscale, dshift it accumulates into) is
// issued before the first use, so a block waits for one memory round trip.
template <class R, class T, int V, int K>
__global__ void __launch_bounds__(kRowThreads) norm_modulate_backward_kernel(BackwardArgs<R, T> a) {
  __shared__ float scratch[32];
  const int C = a.C;
  const int64_t i = blockIdx.x;
  const float mu = a.layer ? a.mean[i] : 0.0f, r = a.rstd[i];
  // xhat holds x and g holds dy until the row pass turns them into x̂ and g.
  float xhat[K][V] = {}, g[K][V] = {}, sc[K][V] = {}, dx[K][V] = {}, dsc[K][V] = {}, dsh[K][V] = {};
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = row_column<V>(k);
    if (c >= C) continue;
    load_vector<V>(a.x + i * C + c, xhat[k]);
    load_vector<V>(a.dy + i * C + c, g[k]);
    if (a.scale) load_vector<V>(a.scale + i * a.ld_mod + c, sc[k]);
    if (a.dx) load_vector<V>(a.dx + i * C + c, dx[k]);
    if (a.dscale) load_vector<V>(a.dscale + i * a.ld_mod + c, dsc[k]);
    if (a.dshift) load_vector<V>(a.dshift + i * a.ld_mod + c, dsh[k]);
  }
  const Affine<T, V> affine{a.weight, a.bias};
  float g_sum = 0.0f, gx_sum = 0.0f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = row_column<V>(k);
    if (c >= C) continue;
#pragma unroll
    for (int j = 0; j < V; ++j) xhat[k][j] = (xhat[k][j] - mu) * r;
    if (a.dscale) {
      float n[V];
      affine.apply(c, xhat[k], n);
#pragma unroll
      for (int j = 0; j < V; ++j) dsc[k][j] += g[k][j] * n[j];
      store_vector<V>(a.dscale + i * a.ld_mod + c, dsc[k]);
    }
    if (a.dshift) {
#pragma unroll
      for (int j = 0; j < V; ++j) dsh[k][j] += g[k][j];
      store_vector<V>(a.dshift + i * a.ld_mod + c, dsh[k]);
    }
    float w[V] = {};
    if (a.weight) load_vector<V>(a.weight + c, w);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const float dn = a.scale ? g[k][j] * (1.0f + sc[k][j]) : g[k][j];
      g[k][j] = a.weight ? dn * w[j] : dn;
      g_sum += g[k][j];
      gx_sum += g[k][j] * xhat[k][j];
    }
  }
  if (!a.dx) return;  // uniform over the block, so the block sums below stay collective
  const float g_mean = a.layer ? block_sum(g_sum, scratch) / C : 0.0f;
  const float gx_mean = block_sum(gx_sum, scratch) / C;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int c = row_column<V>(k);
    if (c >= C) continue;
#pragma unroll
    for (int j = 0; j < V; ++j) dx[k][j] += r * (g[k][j] - g_mean - xhat[k][j] * gx_mean);
    store_vector<V>(a.dx + i * C + c, dx[k]);
  }
}

// dn(i, c)·x̂(i, c) (weight gradient) or dn(i, c) (bias gradient), recomputed from the saved
// stats; V columns at a time for column_sum.
template <class R, class T>
struct NormParamGrad {
  static constexpr int kWidth = kMixedVectorWidth<R, T>;
  const R* x;
  const T *scale, *dy;
  const float *mean, *rstd;
  int64_t ld_mod;
  int C;
  bool with_xhat;
  bool vectorizable(int columns) const {
    return rows_vectorizable<kWidth>(columns, {scale ? ld_mod : 0}, {x, scale, dy});
  }
  template <int V>
  __device__ void operator()(int64_t i, int c, float (&v)[V]) const {
    float d[V], sc[V] = {}, xv[V] = {};
    load_vector<V>(dy + i * C + c, d);
    if (scale) load_vector<V>(scale + i * ld_mod + c, sc);
    if (with_xhat) load_vector<V>(x + i * C + c, xv);
    const float mu = mean ? mean[i] : 0.0f, r = with_xhat ? rstd[i] : 0.0f;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const float dn = scale ? d[j] * (1.0f + sc[j]) : d[j];
      v[j] = with_xhat ? dn * ((xv[j] - mu) * r) : dn;
    }
  }
};

}  // namespace

template <class R, class T>
void residual_norm_modulate_forward(NormKind kind, R* x, const T* gate, int64_t ld_gate, const T* r, R* x_in,
                                    const T* weight, const T* bias, const T* scale, const T* shift, int64_t ld_mod,
                                    T* normed, T* y, float* mean, float* rstd, int64_t N, int C, float eps,
                                    cudaStream_t stream) {
  EMB_CHECK((scale == nullptr) == (shift == nullptr), "norm_modulate: scale and shift go together");
  if (N == 0) return;
  const bool layer = kind == NormKind::layer;
  const ForwardArgs<R, T> args{layer,  x,      gate,   r, ld_gate, x_in, weight, bias, scale,
                               shift,  ld_mod, normed, y, layer ? mean : nullptr, rstd, C, eps};
  constexpr int V = kMixedVectorWidth<R, T>;
  const auto launch = [&](auto vector) {
    launch_row_blocks<decltype(vector)::value>(C, "norm_modulate_forward", [&](auto k, int threads) {
      EMB_LAUNCH((norm_modulate_forward_kernel<R, T, decltype(vector)::value, decltype(k)::value>), unsigned(N),
                 threads, 0, stream)(args);
    });
  };
  if (rows_vectorizable<V>(C, {scale ? ld_mod : 0, gate ? ld_gate : 0},
                           {x, gate, r, x_in, weight, bias, scale, shift, normed, y}))
    launch(std::integral_constant<int, V>{});
  else
    launch(std::integral_constant<int, 1>{});
}

template <class R, class T>
void norm_modulate_forward(NormKind kind, const R* x, const T* weight, const T* bias, const T* scale, const T* shift,
                           int64_t ld_mod, T* y, float* mean, float* rstd, int64_t N, int C, float eps,
                           cudaStream_t stream) {
  // Without a residual the kernel only reads x.
  residual_norm_modulate_forward(kind, const_cast<R*>(x), static_cast<const T*>(nullptr), 0,
                                 static_cast<const T*>(nullptr), static_cast<R*>(nullptr), weight, bias, scale, shift,
                                 ld_mod, static_cast<T*>(nullptr), y, mean, rstd, N, C, eps, stream);
}

template <class R, class T, class G>
void norm_modulate_backward(NormKind kind, const R* x, const T* weight, const T* bias, const T* scale, int64_t ld_mod,
                            const float* mean, const float* rstd, const T* dy, R* dx, G* dweight, G* dbias, T* dscale,
                            T* dshift, int64_t N, int C, void* column_sum_scratch, cudaStream_t stream) {
  if (N == 0) return;
  const bool layer = kind == NormKind::layer;
  const float* mu = layer ? mean : nullptr;
  if (dx || dscale || dshift) {
    const BackwardArgs<R, T> args{layer, x, weight, bias, scale, ld_mod, mu, rstd, dy, dx, dscale, dshift, C};
    constexpr int V = kMixedVectorWidth<R, T>;
    const auto launch = [&](auto vector) {
      launch_row_blocks<decltype(vector)::value>(C, "norm_modulate_backward", [&](auto k, int threads) {
        EMB_LAUNCH((norm_modulate_backward_kernel<R, T, decltype(vector)::value, decltype(k)::value>), unsigned(N),
                   threads, 0, stream)(args);
      });
    };
    if (rows_vectorizable<V>(C, {scale || dscale || dshift ? ld_mod : 0},
                             {x, weight, bias, scale, dy, dx, dscale, dshift}))
      launch(std::integral_constant<int, V>{});
    else
      launch(std::integral_constant<int, 1>{});
  }
  if (dweight)
    column_sum(N, C, dweight, NormParamGrad<R, T>{x, scale, dy, mu, rstd, ld_mod, C, true}, column_sum_scratch, stream);
  if (dbias)
    column_sum(N, C, dbias, NormParamGrad<R, T>{x, scale, dy, mu, rstd, ld_mod, C, false}, column_sum_scratch, stream);
}

#define EMB_INSTANTIATE(T, R)                                                                                     \
  template void norm_modulate_forward<R, T>(NormKind, const R*, const T*, const T*, const T*, const T*, int64_t, T*, \
                                            float*, float*, int64_t, int, float, cudaStream_t);                      \
  template void residual_norm_modulate_forward<R, T>(NormKind, R*, const T*, int64_t, const T*, R*, const T*,        \
                                                     const T*, const T*, const T*, int64_t, T*, T*, float*, float*,  \
                                                     int64_t, int, float, cudaStream_t);
EMB_CUDA_FOR_STORAGE_AND_WIDE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

#define EMB_INSTANTIATE(T, R, G)                                                                                      \
  template void norm_modulate_backward<R, T, G>(NormKind, const R*, const T*, const T*, const T*, int64_t,           \
                                                const float*, const float*, const T*, R*, G*, G*, T*, T*, int64_t,   \
                                                int, void*, cudaStream_t);
EMB_CUDA_FOR_STORAGE_AND_TWO_WIDE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

namespace {
// LayerNorm and RMSNorm are the fused kernel without modulation (scale, shift null); RMSNorm's
// views have mean, bias and dbias absent.
void launch_norm_forward(cuda::NormKind kind, const OpCheck& c, const View& x, const View& weight, const View& bias,
                         const View& y, const View& mean, const View& rstd, float eps, cudaStream_t stream) {
  fp32_views(c, {{"mean", &mean}, {"rstd", &rstd}});
  c.contiguous({{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &y}});
  const DType data = storage(c, {&weight, &bias, &y});
  dispatch_mixed(data, residual_storage(c, data, {&x}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    const T* none = nullptr;
    cuda::norm_modulate_forward(kind, ptr<const R>(x), ptr<const T>(weight), ptr<const T>(bias), none, none, 0,
                                ptr<T>(y), f(mean), f(rstd), x.rows, int(x.cols), eps, stream);
  });
}

void launch_norm_backward(cuda::NormKind kind, const OpCheck& c, const View& x, const View& weight,
                          const View& mean, const View& rstd, const View& dy, const View& dx, const View& dweight,
                          const View& dbias, const cuda::Blas& blas, cudaStream_t stream) {
  fp32_views(c, {{"mean", &mean}, {"rstd", &rstd}});
  c.contiguous({{"x", &x}, {"weight", &weight}, {"dy", &dy}, {"dx", &dx}, {"dweight", &dweight}, {"dbias", &dbias}});
  const DType data = storage(c, {&weight, &dy});
  dispatch_mixed(data, residual_storage(c, data, {&x, &dx}), gradient_storage(c, data, {&dweight, &dbias}),
                 [&](auto t, auto r, auto g) {
                   using T = decltype(t);
                   using R = decltype(r);
                   using G = decltype(g);
                   const T* none = nullptr;
                   cuda::norm_modulate_backward(kind, ptr<const R>(x), ptr<const T>(weight), none, none, 0, fp(mean),
                                                fp(rstd), ptr<const T>(dy), ptr<R>(dx), ptr<G>(dweight), ptr<G>(dbias),
                                                static_cast<T*>(nullptr), static_cast<T*>(nullptr), x.rows,
                                                int(x.cols), blas.column_sum_scratch(stream), stream);
                 });
}
}  // namespace

void CudaOps::layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                                const View& rstd, float eps) {
  launch_norm_forward(cuda::NormKind::layer, check_layernorm_forward(x, weight, bias, y, mean, rstd), x, weight, bias,
                      y, mean, rstd, eps, stream_);
}

void CudaOps::layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd,
                                 const View& dy, const View& dx, const View& dweight, const View& dbias) {
  launch_norm_backward(cuda::NormKind::layer, check_layernorm_backward(x, weight, mean, rstd, dy, dx, dweight, dbias),
                       x, weight, mean, rstd, dy, dx, dweight, dbias, *blas_, stream_);
}

void CudaOps::rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) {
  launch_norm_forward(cuda::NormKind::rms, check_rmsnorm_forward(x, weight, y, rstd), x, weight, View{}, y, View{},
                      rstd, kRmsNormEps, stream_);
}

void CudaOps::rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                               const View& dweight) {
  launch_norm_backward(cuda::NormKind::rms, check_rmsnorm_backward(x, weight, rstd, dy, dx, dweight), x, weight,
                       View{}, rstd, dy, dx, dweight, View{}, *blas_, stream_);
}

namespace {
// Both norm_modulate forwards run the fused kernel (gate, r and x_in absent: the norm alone):
// normed = LN(x) (the backward's input) and y = normed·(1 + scale) + shift in one pass over x.
void launch_residual_norm_modulate(const OpCheck& c, const View& x, const View& gate, const View& r, const View& x_in,
                                   const View& scale, const View& shift, const View& normed, const View& y,
                                   const View& mean, const View& rstd, float eps, cudaStream_t stream) {
  fp32_views(c, {{"mean", &mean}, {"rstd", &rstd}});
  c.contiguous({{"x", &x}, {"r", &r}, {"x_in", &x_in}, {"normed", &normed}, {"y", &y}});
  const DType data = storage(c, {&gate, &r, &scale, &shift, &normed, &y});
  dispatch_mixed(data, residual_storage(c, data, {&x, &x_in}), data, [&](auto t, auto rt, auto) {
    using T = decltype(t);
    using R = decltype(rt);
    const T* none = nullptr;
    cuda::residual_norm_modulate_forward(cuda::NormKind::layer, ptr<R>(x), ptr<const T>(gate), gate.ld,
                                         ptr<const T>(r), ptr<R>(x_in), none, none, ptr<const T>(scale),
                                         ptr<const T>(shift), scale.ld, ptr<T>(normed), ptr<T>(y), f(mean), f(rstd),
                                         x.rows, int(x.cols), eps, stream);
  });
}
}  // namespace

void CudaOps::norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                                    const View& y, const View& mean, const View& rstd, float eps) {
  launch_residual_norm_modulate(check_norm_modulate_forward(x, scale, shift, normed, y, mean, rstd), x, View{},
                                View{}, View{}, scale, shift, normed, y, mean, rstd, eps, stream_);
}

void CudaOps::residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                             const View& scale, const View& shift, const View& normed, const View& y,
                                             const View& mean, const View& rstd, float eps) {
  const OpCheck c = check_residual_norm_modulate_forward(x, gate, r, x_in, scale, shift, normed, y, mean, rstd);
  launch_residual_norm_modulate(c, x, gate, r, x_in, scale, shift, normed, y, mean, rstd, eps, stream_);
}

void CudaOps::norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                                     const View& rstd, const View& dy, const View& dx, const View& dscale,
                                     const View& dshift) {
  const OpCheck c = check_norm_modulate_backward(x, normed, scale, mean, rstd, dy, dx, dscale, dshift);
  fp32_views(c, {{"mean", &mean}, {"rstd", &rstd}});
  c.contiguous({{"x", &x}, {"normed", &normed}, {"dy", &dy}, {"dx", &dx}});
  // The kernel recomputes LN(x) from x, mean and rstd; `normed` is checked but not read.
  const DType data = storage(c, {&normed, &scale, &dy, &dscale, &dshift});
  dispatch_mixed(data, residual_storage(c, data, {&x, &dx}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    const T* none = nullptr;
    cuda::norm_modulate_backward(cuda::NormKind::layer, ptr<const R>(x), none, none, ptr<const T>(scale), scale.ld,
                                 fp(mean), fp(rstd), ptr<const T>(dy), ptr<R>(dx), static_cast<T*>(nullptr),
                                 static_cast<T*>(nullptr), ptr<T>(dscale), ptr<T>(dshift), x.rows, int(x.cols),
                                 nullptr, stream_);
  });
}

}  // namespace emb
