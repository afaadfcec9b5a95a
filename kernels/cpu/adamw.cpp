#include "kernels/cpu/adamw.hpp"

#include <algorithm>
#include <cmath>

namespace emb::cpu {

namespace {
constexpr int64_t kParallelElements = 1 << 15;
}

double sum_squares(const float* g, int64_t n) {
  double s = 0.0;
#pragma omp parallel for simd reduction(+ : s) if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) s += double(g[i]) * double(g[i]);
  return s;
}

void adamw_step(float* param, const float* grad, float* m, float* v, int64_t n, const AdamWConfig& cfg, int64_t step,
                float grad_scale, float decay_mult) {
  const float bc1 = static_cast<float>(1.0 - std::pow(double(cfg.beta1), double(step)));
  const float bc2 = static_cast<float>(1.0 - std::pow(double(cfg.beta2), double(step)));
  const float decay = cfg.weight_decay * decay_mult;
#pragma omp parallel for if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i] * grad_scale;
    m[i] = cfg.beta1 * m[i] + (1.0f - cfg.beta1) * g;
    v[i] = cfg.beta2 * v[i] + (1.0f - cfg.beta2) * g * g;
    const float m_hat = m[i] / bc1;
    const float v_hat = v[i] / bc2;
    param[i] -= cfg.lr * (m_hat / (std::sqrt(v_hat) + cfg.eps) + decay * param[i]);
  }
}

float clip_coefficient(double global_norm, float max_norm) {
  if (max_norm <= 0.0f) return 1.0f;
  return static_cast<float>(std::min(1.0, double(max_norm) / (global_norm + 1e-6)));
}

}  // namespace emb::cpu
