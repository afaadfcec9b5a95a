#include "kernels/cuda/activation.hpp"
#include "kernels/cuda/activation_math.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

template <class T>
__global__ void activation_forward_kernel(Activation act, const T* x, T* y, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    y[e] = from_f32<T>(activation_value(act, to_f32(x[e])));
}

template <class T>
__global__ void activation_backward_kernel(Activation act, const T* x, const T* dy, T* dx, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    add_to(dx + e, activation_derivative(act, to_f32(x[e])) * to_f32(dy[e]));
}

}  // namespace

template <class T>
void activation_forward(Activation act, const T* x, T* y, int64_t n, cudaStream_t stream) {
  EMB_LAUNCH(activation_forward_kernel, grid_for(n, 256), 256, 0, stream)(act, x, y, n);
  check_launch("activation_forward");
}

template <class T>
void activation_backward(Activation act, const T* x, const T* dy, T* dx, int64_t n, cudaStream_t stream) {
  EMB_LAUNCH(activation_backward_kernel, grid_for(n, 256), 256, 0, stream)(act, x, dy, dx, n);
  check_launch("activation_backward");
}

#define EMB_INSTANTIATE(T)                                                                   \
  template void activation_forward<T>(Activation, const T*, T*, int64_t, cudaStream_t); \
  template void activation_backward<T>(Activation, const T*, const T*, T*, int64_t, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::activation_forward(Activation act, const View& x, const View& y) {
  const OpCheck c = check_activation("activation_forward", act, {{"x", &x}, {"y", &y}});
  c.contiguous();
  dispatch(storage(c, {&x, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::activation_forward(act, ptr<const T>(x), ptr<T>(y), x.size(), stream_);
  });
}

void CudaOps::activation_backward(Activation act, const View& x, const View& dy, const View& dx) {
  const OpCheck c = check_activation("activation_backward", act, {{"x", &x}, {"dy", &dy}, {"dx", &dx}});
  c.contiguous();
  dispatch(storage(c, {&x, &dy, &dx}), [&](auto t) {
    using T = decltype(t);
    cuda::activation_backward(act, ptr<const T>(x), ptr<const T>(dy), ptr<T>(dx), x.size(), stream_);
  });
}

}  // namespace emb
