#include "kernels/cpu/activation.hpp"

#include <cmath>

namespace emb::cpu {

namespace {
constexpr int64_t kParallelElements = 1 << 14;
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;
}  // namespace

void gelu_tanh_forward(const float* x, float* y, int64_t n) {
#pragma omp parallel for if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + kGeluCubic * v * v * v)));
  }
}

void gelu_tanh_backward(const float* x, const float* dy, float* dx, int64_t n) {
#pragma omp parallel for if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float t = std::tanh(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
    dx[i] += dy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du);
  }
}

void silu_forward(const float* x, float* y, int64_t n) {
#pragma omp parallel for if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void silu_backward(const float* x, const float* dy, float* dx, int64_t n) {
#pragma omp parallel for if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const float s = 1.0f / (1.0f + std::exp(-x[i]));
    dx[i] += dy[i] * s * (1.0f + x[i] * (1.0f - s));
  }
}

void relu_forward(const float* x, float* y, int64_t n) {
#pragma omp parallel for if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu_backward(const float* x, const float* dy, float* dx, int64_t n) {
#pragma omp parallel for if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) dx[i] += x[i] > 0.0f ? dy[i] : 0.0f;
}

}  // namespace emb::cpu
