#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/flow_loss.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
struct InterpolateArgs {
  const T *u, *w;
  int64_t ld_u, ld_w;
  const int32_t* src_rows;
  const float* t;
  const int32_t* t_rows;
  T* y;
  int64_t ld_y, n, C;
};

template <class T>
__global__ void flow_interpolate_kernel(InterpolateArgs<T> a) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < a.n * a.C;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / a.C, c = e % a.C;
    const float s = a.t[a.t_rows ? a.t_rows[r] : r];
    const int64_t i = a.src_rows ? a.src_rows[r] : r;
    a.y[r * a.ld_y + c] = from_f32<T>((1.0f - s) * to_f32(a.u[i * a.ld_u + c]) + s * to_f32(a.w[i * a.ld_w + c]));
  }
}

struct LossArgs {
  const float* row_weight;
  const int32_t *target_rows, *target_cols;
  int64_t Ct, n, C;
  double denominator, weight;
};

// One block: thread k takes elements k, k + blockDim, ... then a fixed-order block sum.
template <class T>
__global__ void __launch_bounds__(kThreads)
    mse_loss_kernel(const T* pred, const T* plus, const T* minus, const T* mask, T* dpred, double* sum, LossArgs a) {
  __shared__ double scratch[32];
  double acc = 0.0;
  for (int64_t e = threadIdx.x; e < a.n * a.C; e += blockDim.x) {
    const int64_t r = e / a.C, c = e % a.C;
    const int64_t t = (a.target_rows ? a.target_rows[r] : r) * a.Ct + (a.target_cols ? a.target_cols[c] : c);
    const float diff = to_f32(pred[e]) - (to_f32(plus[t]) - to_f32(minus[t]));
    const double m = (a.row_weight ? double(a.row_weight[r]) : 1.0) * (mask ? double(to_f32(mask[t])) : 1.0);
    acc += m * diff * diff;
    if (dpred) dpred[e] = from_f32<T>(float(2.0 * a.weight * m * diff / a.denominator));
  }
  acc = block_sum(acc, scratch);
  if (threadIdx.x == 0) *sum = acc;
}

}  // namespace

template <class T>
void flow_interpolate(const T* u, int64_t ld_u, const T* w, int64_t ld_w, const int32_t* src_rows, const float* t,
                      const int32_t* t_rows, T* y, int64_t ld_y, int64_t n, int64_t C, cudaStream_t stream) {
  if (n * C == 0) return;
  EMB_LAUNCH(flow_interpolate_kernel, grid_for(n * C, kThreads), kThreads, 0, stream)(
      InterpolateArgs<T>{u, w, ld_u, ld_w, src_rows, t, t_rows, y, ld_y, n, C});
  check_launch("flow_interpolate");
}

template <class T>
void mse_loss(const T* pred, const T* plus, const T* minus, const T* mask, const float* row_weight,
              const int32_t* target_rows, const int32_t* target_cols, int64_t Ct, double denominator, double weight,
              T* dpred, double* sum, int64_t n, int64_t C, cudaStream_t stream) {
  const LossArgs args{row_weight, target_rows, target_cols, Ct, n, C, denominator, weight};
  EMB_LAUNCH(mse_loss_kernel, 1, kThreads, 0, stream)(pred, plus, minus, mask, dpred, sum, args);
  check_launch("mse_loss");
}

#define EMB_INSTANTIATE(T)                                                                                            \
  template void flow_interpolate<T>(const T*, int64_t, const T*, int64_t, const int32_t*, const float*,             \
                                    const int32_t*, T*, int64_t, int64_t, int64_t, cudaStream_t);                     \
  template void mse_loss<T>(const T*, const T*, const T*, const T*, const float*, const int32_t*, const int32_t*,    \
                            int64_t, double, double, T*, double*, int64_t, int64_t, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                               const RowIndex& t_rows, const View& y) {
  const OpCheck c = check_flow_interpolate(u, w, src_rows, t, t_rows, y);
  fp32_views(c, {{"t", &t}});
  c.contiguous({{"t", &t}});
  dispatch(storage(c, {&u, &w, &y}), [&](auto tag) {
    using T = decltype(tag);
    cuda::flow_interpolate(ptr<const T>(u), u.ld, ptr<const T>(w), w.ld, src_rows.data, fp(t), t_rows.data, ptr<T>(y),
                           y.ld, y.rows, y.cols, stream_);
  });
}

void CudaOps::mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                       const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg,
                       const View& dpred, double* sum) {
  const OpCheck c = check_mse_loss(pred, plus, minus, mask, target_rows, target_cols, cfg, dpred, sum);
  c.contiguous();
  dispatch(storage(c, {&pred, &plus, &minus, &mask, &dpred}), [&](auto tag) {
    using T = decltype(tag);
    cuda::mse_loss(ptr<const T>(pred), ptr<const T>(plus), ptr<const T>(minus), ptr<const T>(mask),
                   fp(cfg.row_weight), target_rows.data, target_cols.data, plus.cols, cfg.denominator, cfg.weight,
                   ptr<T>(dpred), sum, pred.rows, pred.cols, stream_);
  });
}

}  // namespace emb
