#include "kernels/cpu/activation.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/exp_fast.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {
constexpr int64_t kParallelElements = 1 << 14;
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;
constexpr double kInvSqrt2 = 0.70710678118654752440, kInvSqrt2Pi = 0.39894228040143267794;

// Both smooth activations are x·σ(z): silu with z = x, gelu_tanh with z = 2u because
// 0.5(1 + tanh u) = σ(2u). Writing σ through exp_fast (no libm call) lets the loops
// auto-vectorise, and no tanh(u) → ±1 cancellation is involved. σ is built from e = e^−|z| ∈ [0, 1],
// which never overflows and is exactly 0 for |z| > 87.3, so σ saturates to exactly 0 or 1.
struct Sigmoid {
  float s;       // σ(z)
  float s_1m_s;  // σ(z)(1 − σ(z)) = e/(1 + e)², without the 1 − σ cancellation near σ = 1
};

inline Sigmoid sigmoid(float z) {
  const float e = exp_fast(-std::fabs(z));
  const float r = 1.0f / (1.0f + e);  // σ(|z|)
  return {z >= 0.0f ? r : e * r, e * r * r};
}

// σ(2u) is already exactly 0 or 1 in float beyond |x| ≈ 10.1, so clamping x there changes no
// result and keeps x³ (and 0·∞ in the backward) out of reach.
constexpr float kGeluSaturated = 64.0f;
inline float gelu_clamp(float v) { return std::min(std::max(v, -kGeluSaturated), kGeluSaturated); }
inline float gelu_z(float v) { return 2.0f * kSqrt2OverPi * (v + kGeluCubic * v * v * v); }
inline float gelu_dz(float v) { return 2.0f * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v); }

// body(i) for i in [0, n): across the OpenMP threads only when n is large and there are threads
// (parallel_for.hpp). A parallel region whose `if` is false is still a runtime call, and inside
// another region (the per-row calls of channel_rmsnorm and gated_activation) a team fork with
// futex wake-ups: a syscall per row was most of the VAE's norm time. vector_loop vectorises (the
// exp_fast bodies), scalar_loop keeps the libm bodies as they were compiled.
template <class Body>
void vector_loop(int64_t n, const Body& body) {
  if (max_team(n >= kParallelElements) > 1) {
#pragma omp parallel for simd
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) body(i);
}

template <class Body>
void scalar_loop(int64_t n, const Body& body) {
  parallel_for(n, n >= kParallelElements, body);
}
}  // namespace

void gelu_tanh_forward(const float* x, float* y, int64_t n) {
  vector_loop(n, [&](int64_t i) { y[i] = x[i] * sigmoid(gelu_z(gelu_clamp(x[i]))).s; });
}

void gelu_tanh_backward(const float* x, const float* dy, float* dx, int64_t n) {
  vector_loop(n, [&](int64_t i) {
    const float v = gelu_clamp(x[i]);
    const Sigmoid g = sigmoid(gelu_z(v));
    dx[i] += dy[i] * (g.s + v * g.s_1m_s * gelu_dz(v));
  });
}

// Φ(x) = 0.5(1 + erf(x/√2)) and φ(x) = e^(−x²/2)/√(2π), in double (libm's erf).
void gelu_erf_forward(const float* x, float* y, int64_t n) {
  scalar_loop(n, [&](int64_t i) {
    const double v = x[i];
    y[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v * kInvSqrt2)));
  });
}

void gelu_erf_backward(const float* x, const float* dy, float* dx, int64_t n) {
  scalar_loop(n, [&](int64_t i) {
    const double v = x[i];
    const double grad = 0.5 * (1.0 + std::erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * std::exp(-0.5 * v * v);
    dx[i] += dy[i] * static_cast<float>(grad);
  });
}

void silu_forward(const float* x, float* y, int64_t n) {
  vector_loop(n, [&](int64_t i) { y[i] = x[i] * sigmoid(x[i]).s; });
}

void silu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  vector_loop(n, [&](int64_t i) {
    const Sigmoid g = sigmoid(x[i]);
    dx[i] += dy[i] * (g.s + x[i] * g.s_1m_s);
  });
}

void relu_forward(const float* x, float* y, int64_t n) {
  scalar_loop(n, [&](int64_t i) { y[i] = x[i] > 0.0f ? x[i] : 0.0f; });
}

void relu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  scalar_loop(n, [&](int64_t i) { dx[i] += x[i] > 0.0f ? dy[i] : 0.0f; });
}

void activation_forward(Activation act, const float* x, float* y, int64_t n) {
  switch (act) {
    case Activation::relu: return relu_forward(x, y, n);
    case Activation::silu: return silu_forward(x, y, n);
    case Activation::gelu_tanh: return gelu_tanh_forward(x, y, n);
    case Activation::gelu_erf: return gelu_erf_forward(x, y, n);
    case Activation::none: break;
  }
  EMB_ASSERT(false);
}

void activation_backward(Activation act, const float* x, const float* dy, float* dx, int64_t n) {
  switch (act) {
    case Activation::relu: return relu_backward(x, dy, dx, n);
    case Activation::silu: return silu_backward(x, dy, dx, n);
    case Activation::gelu_tanh: return gelu_tanh_backward(x, dy, dx, n);
    case Activation::gelu_erf: return gelu_erf_backward(x, dy, dx, n);
    case Activation::none: break;
  }
  EMB_ASSERT(false);
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::activation_forward(Activation act, const View& x, const View& y) {
  fp32_contiguous(check_activation("activation_forward", act, {{"x", &x}, {"y", &y}}));
  cpu::activation_forward(act, cf(x), f(y), x.size());
}

void CpuOps::activation_backward(Activation act, const View& x, const View& dy, const View& dx) {
  fp32_contiguous(check_activation("activation_backward", act, {{"x", &x}, {"dy", &dy}, {"dx", &dx}}));
  cpu::activation_backward(act, cf(x), cf(dy), f(dx), x.size());
}

}  // namespace emb
