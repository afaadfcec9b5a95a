#include "kernels/cpu/adamw.hpp"

#include <cmath>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {
constexpr int64_t kParallelElements = 1 << 15;
}

double sum_squares(const float* g, int64_t n) {
  double s = 0.0;
  const bool worth_threads = n >= kParallelElements;
  // One thread: the loop the region ran, without the region. Its `if` turns the lanes off as well
  // as the threads (OpenMP 5.0), so below the threshold the sum stays in index order.
  if (max_team(worth_threads) == 1) {
#pragma omp simd reduction(+ : s) if (worth_threads)
    for (int64_t i = 0; i < n; ++i) s += double(g[i]) * double(g[i]);
    return s;
  }
#pragma omp parallel for simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += double(g[i]) * double(g[i]);
  return s;
}

void adamw_step(float* param, const float* grad, float* m, float* v, int64_t n, const AdamWConfig& cfg, int64_t step,
                float grad_scale, float decay_mult) {
  const float bc1 = static_cast<float>(1.0 - std::pow(double(cfg.beta1), double(step)));
  const float bc2 = static_cast<float>(1.0 - std::pow(double(cfg.beta2), double(step)));
  const float decay = cfg.weight_decay * decay_mult;
  parallel_for(n, n >= kParallelElements, [=](int64_t i) {
    const float g = grad[i] * grad_scale;
    m[i] = cfg.beta1 * m[i] + (1.0f - cfg.beta1) * g;
    v[i] = cfg.beta2 * v[i] + (1.0f - cfg.beta2) * g * g;
    const float m_hat = m[i] / bc1;
    const float v_hat = v[i] / bc2;
    param[i] -= cfg.lr * (m_hat / (std::sqrt(v_hat) + cfg.eps) + decay * param[i]);
  });
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::sum_squares(const View& g, double* out) {
  fp32_contiguous(check_sum_squares(g, out));
  *out = cpu::sum_squares(cf(g), g.size());
}

void CpuOps::adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                        int64_t step, float grad_scale, float decay_mult) {
  fp32_contiguous(check_adamw_step(param, grad, m, v));
  cpu::adamw_step(f(param), cf(grad), f(m), f(v), param.size(), cfg, step, grad_scale, decay_mult);
}

}  // namespace emb
