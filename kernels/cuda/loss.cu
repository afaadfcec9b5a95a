#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/loss.hpp"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr int kThreads = 1024;

template <class T>
__global__ void __launch_bounds__(kThreads)
    mse_loss_forward_kernel(const T* pred, const T* target, const T* mask, float* loss, float* denom, int64_t n) {
  __shared__ double scratch[32];
  double err = 0.0, weight = 0.0;
  for (int64_t e = threadIdx.x; e < n; e += kThreads) {
    const double m = mask ? to_f32(mask[e]) : 1.0;
    const double d = double(to_f32(pred[e])) - to_f32(target[e]);
    err += m * d * d;
    weight += m;
  }
  err = block_sum(err, scratch);
  weight = block_sum(weight, scratch);
  if (threadIdx.x == 0) {
    *loss = weight > 0.0 ? float(err / weight) : 0.0f;
    *denom = float(weight);
  }
}

template <class T>
__global__ void mse_loss_backward_kernel(const T* pred, const T* target, const T* mask, const float* denom,
                                         float weight, T* dpred, int64_t n) {
  const float d = *denom;
  if (d <= 0.0f) return;
  const float coef = 2.0f * weight / d;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const float m = mask ? to_f32(mask[e]) : 1.0f;
    add_to(dpred + e, coef * m * (to_f32(pred[e]) - to_f32(target[e])));
  }
}

}  // namespace

template <class T>
void mse_loss_forward(const T* pred, const T* target, const T* mask, float* loss, float* denom, int64_t n,
                      cudaStream_t stream) {
  EMB_LAUNCH(mse_loss_forward_kernel, 1, kThreads, 0, stream)(pred, target, mask, loss, denom, n);
  check_launch("mse_loss_forward");
}

template <class T>
void mse_loss_backward(const T* pred, const T* target, const T* mask, const float* denom, float weight, T* dpred,
                       int64_t n, cudaStream_t stream) {
  EMB_LAUNCH(mse_loss_backward_kernel, grid_for(n, 256), 256, 0, stream)(pred, target, mask, denom, weight, dpred, n);
  check_launch("mse_loss_backward");
}

#define EMB_INSTANTIATE(T)                                                                                  \
  template void mse_loss_forward<T>(const T*, const T*, const T*, float*, float*, int64_t, cudaStream_t); \
  template void mse_loss_backward<T>(const T*, const T*, const T*, const float*, float, T*, int64_t, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda
