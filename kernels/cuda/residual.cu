#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/mixed_storage.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/residual.hpp"
#include "kernels/cuda/storage.cuh"
#include "kernels/cuda/vector_access.cuh"

namespace emb::cuda {

namespace {

// V consecutive columns per step (kMixedVectorWidth when every row of every operand is 16-byte
// aligned, else V = 1); C is a multiple of V.
template <class R, class T, int V>
__global__ void gated_residual_forward_kernel(R* x, const T* gate, int64_t ld_gate, const T* y, int64_t N, int C) {
  const int64_t vectors = N * C / V;
  for (int64_t q = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; q < vectors; q += int64_t(gridDim.x) * blockDim.x) {
    const int64_t e = q * V, i = e / C, c = e % C;
    float xv[V], yv[V], g[V];
    load_vector<V>(x + e, xv);
    load_vector<V>(y + e, yv);
    if (gate) load_vector<V>(gate + i * ld_gate + c, g);
#pragma unroll
    for (int j = 0; j < V; ++j) xv[j] += (gate ? g[j] : 1.0f) * yv[j];
    store_vector<V>(x + e, xv);
  }
}

template <class R, class T, int V>
__global__ void gated_residual_backward_kernel(const T* gate, int64_t ld_gate, const T* y, const R* dx, T* dy,
                                               T* dgate, int64_t N, int C) {
  const int64_t vectors = N * C / V;
  for (int64_t q = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; q < vectors; q += int64_t(gridDim.x) * blockDim.x) {
    const int64_t e = q * V, i = e / C, c = e % C;
    float d[V], g[V], acc[V];
    load_vector<V>(dx + e, d);
    if (gate) load_vector<V>(gate + i * ld_gate + c, g);
    if (dy) {
      load_vector<V>(dy + e, acc);
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] += gate ? d[j] * g[j] : d[j];
      store_vector<V>(dy + e, acc);
    }
    if (dgate) {
      float yv[V];
      load_vector<V>(y + e, yv);
      load_vector<V>(dgate + i * ld_gate + c, acc);
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] += d[j] * yv[j];
      store_vector<V>(dgate + i * ld_gate + c, acc);
    }
  }
}

}  // namespace

template <class R, class T>
void gated_residual_forward(R* x, const T* gate, int64_t ld_gate, const T* y, int64_t N, int C, cudaStream_t stream) {
  constexpr int V = kMixedVectorWidth<R, T>;
  if (rows_vectorizable<V>(C, {gate ? ld_gate : 0}, {x, gate, y}))
    EMB_LAUNCH((gated_residual_forward_kernel<R, T, V>), grid_for(N * C / V, 256), 256, 0, stream)(x, gate, ld_gate,
                                                                                                 y, N, C);
  else
    EMB_LAUNCH((gated_residual_forward_kernel<R, T, 1>), grid_for(N * C, 256), 256, 0, stream)(x, gate, ld_gate, y, N,
                                                                                             C);
  check_launch("gated_residual_forward");
}

template <class R, class T>
void gated_residual_backward(const T* gate, int64_t ld_gate, const T* y, const R* dx, T* dy, T* dgate, int64_t N,
                             int C, cudaStream_t stream) {
  constexpr int V = kMixedVectorWidth<R, T>;
  if (rows_vectorizable<V>(C, {gate || dgate ? ld_gate : 0}, {gate, y, dx, dy, dgate}))
    EMB_LAUNCH((gated_residual_backward_kernel<R, T, V>), grid_for(N * C / V, 256), 256, 0, stream)(gate, ld_gate, y,
                                                                                                  dx, dy, dgate, N, C);
  else
    EMB_LAUNCH((gated_residual_backward_kernel<R, T, 1>), grid_for(N * C, 256), 256, 0, stream)(gate, ld_gate, y, dx,
                                                                                              dy, dgate, N, C);
  check_launch("gated_residual_backward");
}

#define EMB_INSTANTIATE(T, R)                                                                                    \
  template void gated_residual_forward<R, T>(R*, const T*, int64_t, const T*, int64_t, int, cudaStream_t);     \
  template void gated_residual_backward<R, T>(const T*, int64_t, const T*, const R*, T*, T*, int64_t, int,     \
                                              cudaStream_t);
EMB_CUDA_FOR_STORAGE_AND_WIDE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::gated_residual_forward(const View& x, const View& gate, const View& y) {
  const OpCheck c = check_gated_residual_forward(x, gate, y);
  c.contiguous({{"x", &x}, {"y", &y}});
  const DType data = storage(c, {&gate, &y});
  dispatch_mixed(data, residual_storage(c, data, {&x}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    cuda::gated_residual_forward(ptr<R>(x), ptr<const T>(gate), gate.ld, ptr<const T>(y), x.rows, int(x.cols),
                                 stream_);
  });
}

void CudaOps::gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                                      const View& dgate) {
  const OpCheck c = check_gated_residual_backward(gate, y, dx, dy, dgate);
  c.contiguous({{"y", &y}, {"dx", &dx}, {"dy", &dy}});
  const DType data = storage(c, {&gate, &y, &dy, &dgate});
  dispatch_mixed(data, residual_storage(c, data, {&dx}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    cuda::gated_residual_backward(ptr<const T>(gate), gate.ld, ptr<const T>(y), ptr<const R>(dx), ptr<T>(dy),
                                  ptr<T>(dgate), y.rows, int(y.cols), stream_);
  });
}

}  // namespace emb
