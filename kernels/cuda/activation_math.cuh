// The pointwise activations' values and derivatives in fp32 (device code), shared by the
// activation kernels (activation.cu) and the gated activations (gated_activation.cu).
#pragma once
#include "kernels/cuda/activation.hpp"

namespace emb::cuda {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// gelu_tanh(x) = 0.5x(1 + tanh(u)), u = √(2/π)(x + 0.044715x³)
__device__ __forceinline__ float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
}
__device__ __forceinline__ float gelu_tanh_grad(float x) {
  const float th = tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
}
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
// gelu_erf(x) = xΦ(x), Φ(x) = 0.5(1 + erf(x/√2)); its derivative Φ(x) + xφ(x) (in double, as the CPU)
constexpr double kInvSqrt2 = 0.70710678118654752440, kInvSqrt2Pi = 0.39894228040143267794;
__device__ __forceinline__ float gelu_erf(float x) {
  return float(0.5 * double(x) * (1.0 + erf(double(x) * kInvSqrt2)));
}
__device__ __forceinline__ float gelu_erf_grad(float x) {
  const double v = x;
  return float(0.5 * (1.0 + erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * exp(-0.5 * v * v));
}

__device__ __forceinline__ float activation_value(Activation act, float x) {
  switch (act) {
    case Activation::gelu_tanh:
      return gelu_tanh(x);
    case Activation::gelu_erf:
      return gelu_erf(x);
    case Activation::silu:
      return x * sigmoid(x);
    default:
      return x > 0.0f ? x : 0.0f;
  }
}

__device__ __forceinline__ float activation_derivative(Activation act, float x) {
  switch (act) {
    case Activation::gelu_tanh:
      return gelu_tanh_grad(x);
    case Activation::gelu_erf:
      return gelu_erf_grad(x);
    case Activation::silu: {
      const float s = sigmoid(x);
      return s * (1.0f + x * (1.0f - s));
    }
    default:
      return x > 0.0f ? 1.0f : 0.0f;
  }
}

}  // namespace emb::cuda
