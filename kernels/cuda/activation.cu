#include "kernels/cuda/activation.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// gelu_tanh(x) = 0.5x(1 + tanh(u)), u = √(2/π)(x + 0.044715x³)
__device__ float gelu_tanh(float x) { return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x))); }
__device__ float gelu_tanh_grad(float x) {
  const float th = tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
}
__device__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
// gelu_erf(x) = xΦ(x), Φ(x) = 0.5(1 + erf(x/√2)); its derivative Φ(x) + xφ(x) (in double, as the CPU).
constexpr double kInvSqrt2 = 0.70710678118654752440, kInvSqrt2Pi = 0.39894228040143267794;
__device__ float gelu_erf(float x) { return float(0.5 * double(x) * (1.0 + erf(double(x) * kInvSqrt2))); }
__device__ float gelu_erf_grad(float x) {
  const double v = x;
  return float(0.5 * (1.0 + erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * exp(-0.5 * v * v));
}

__device__ float apply(Activation act, float x) {
  switch (act) {
    case Activation::gelu_tanh: return gelu_tanh(x);
    case Activation::gelu_erf: return gelu_erf(x);
    case Activation::silu: return x * sigmoid(x);
    default: return x > 0.0f ? x : 0.0f;
  }
}

__device__ float derivative(Activation act, float x) {
  switch (act) {
    case Activation::gelu_tanh: return gelu_tanh_grad(x);
    case Activation::gelu_erf: return gelu_erf_grad(x);
    case Activation::silu: {
      const float s = sigmoid(x);
      return s * (1.0f + x * (1.0f - s));
    }
    default: return x > 0.0f ? 1.0f : 0.0f;
  }
}

template <class T>
__global__ void activation_forward_kernel(Activation act, const T* x, T* y, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    y[e] = from_f32<T>(apply(act, to_f32(x[e])));
}

template <class T>
__global__ void activation_backward_kernel(Activation act, const T* x, const T* dy, T* dx, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    add_to(dx + e, derivative(act, to_f32(x[e])) * to_f32(dy[e]));
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
