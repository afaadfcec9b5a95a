#include "kernels/cpu/norm.hpp"

#include <cmath>
#include <vector>

#include "kernels/cpu/column_sum.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {

constexpr int64_t kParallelElements = 1 << 15;

// Σ a[c]·b[c] in double (the row reductions of the backward, where cancellation matters).
double dot(const float* a, const float* b, int C) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int c = 0; c < C; ++c) s += double(a[c]) * double(b[c]);
  return s;
}

}  // namespace

void layernorm_forward(const float* x, const float* weight, const float* bias, float* y, float* mean, float* rstd,
                       int64_t N, int C, float eps) {
  parallel_for(N, N * C >= kParallelElements, [=](int64_t i) {
    const float* xi = x + i * C;
    double sum = 0.0;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < C; ++c) sum += xi[c];
    const double mu = sum / C;
    double var = 0.0;
#pragma omp simd reduction(+ : var)
    for (int c = 0; c < C; ++c) var += (xi[c] - mu) * (xi[c] - mu);
    const float m = static_cast<float>(mu);
    const float r = static_cast<float>(1.0 / std::sqrt(var / C + eps));
    mean[i] = m;
    rstd[i] = r;
    float* yi = y + i * C;
    for (int c = 0; c < C; ++c) {
      const float xhat = (xi[c] - m) * r;
      yi[c] = (weight ? xhat * weight[c] : xhat) + (bias ? bias[c] : 0.0f);
    }
  });
}

// dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) with g = dy·weight.
void layernorm_backward(const float* x, const float* weight, const float* mean, const float* rstd, const float* dy,
                        float* dx, float* dweight, float* dbias, int64_t N, int C) {
  if (dx) {
    struct Rows {
      std::vector<float> g, xhat;
    };
    parallel_for_scratch(
        N, N * C >= kParallelElements,
        [C]() -> Rows& {
          static thread_local Rows rows;  // per thread, kept across calls: no heap allocation per call
          rows.g.resize(size_t(C)), rows.xhat.resize(size_t(C));
          return rows;
        },
        [=](Rows& rows, int64_t i) {
          std::vector<float>& g = rows.g;
          std::vector<float>& xhat = rows.xhat;
          const float* xi = x + i * C;
          const float* dyi = dy + i * C;
          for (int c = 0; c < C; ++c) {
            g[c] = weight ? dyi[c] * weight[c] : dyi[c];
            xhat[c] = (xi[c] - mean[i]) * rstd[i];
          }
          double g_sum = 0.0;
#pragma omp simd reduction(+ : g_sum)
          for (int c = 0; c < C; ++c) g_sum += g[c];
          const float g_mean = static_cast<float>(g_sum / C);
          const float gx_mean = static_cast<float>(dot(g.data(), xhat.data(), C) / C);
          float* dxi = dx + i * C;
          for (int c = 0; c < C; ++c) dxi[c] += rstd[i] * (g[c] - g_mean - xhat[c] * gx_mean);
        });
  }
  if (dweight)
    accumulate_column_sums(N, C, dweight, [=](int64_t i, int c) {
      return dy[i * C + c] * ((x[i * C + c] - mean[i]) * rstd[i]);
    });
  if (dbias) accumulate_column_sums(N, C, dbias, [=](int64_t i, int c) { return dy[i * C + c]; });
}

void rmsnorm_forward(const float* x, const float* weight, float* y, float* rstd, int64_t N, int C) {
  parallel_for(N, N * C >= kParallelElements, [=](int64_t i) {
    const float* xi = x + i * C;
    const float r = static_cast<float>(1.0 / std::sqrt(dot(xi, xi, C) / C + kNormEps));
    rstd[i] = r;
    float* yi = y + i * C;
    for (int c = 0; c < C; ++c) yi[c] = weight ? xi[c] * r * weight[c] : xi[c] * r;
  });
}

// dx = rstd·(g − x·rstd²·mean(g·x)) with g = dy·weight.
void rmsnorm_backward(const float* x, const float* weight, const float* rstd, const float* dy, float* dx,
                      float* dweight, int64_t N, int C) {
  if (dx)
    parallel_for_scratch(
        N, N * C >= kParallelElements,
        [C]() -> std::vector<float>& {
          static thread_local std::vector<float> g;  // as layernorm_backward's
          g.resize(size_t(C));
          return g;
        },
        [=](std::vector<float>& g, int64_t i) {
          const float* xi = x + i * C;
          const float* dyi = dy + i * C;
          for (int c = 0; c < C; ++c) g[c] = weight ? dyi[c] * weight[c] : dyi[c];
          const float r = rstd[i];
          const float coef = static_cast<float>(dot(g.data(), xi, C) / C) * r * r;
          float* dxi = dx + i * C;
          for (int c = 0; c < C; ++c) dxi[c] += r * (g[c] - xi[c] * coef);
        });
  if (dweight)
    accumulate_column_sums(N, C, dweight, [=](int64_t i, int c) { return dy[i * C + c] * (x[i * C + c] * rstd[i]); });
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                               const View& rstd, float eps) {
  fp32_contiguous(check_layernorm_forward(x, weight, bias, y, mean, rstd));
  cpu::layernorm_forward(cf(x), cf(weight), cf(bias), f(y), f(mean), f(rstd), x.rows, int(x.cols), eps);
}

void CpuOps::layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd,
                                const View& dy, const View& dx, const View& dweight, const View& dbias) {
  const OpCheck c = check_layernorm_backward(x, weight, mean, rstd, dy, dx, dweight, dbias);
  fp32_contiguous(c);
  c.contiguous({{"dx", &dx}});
  cpu::layernorm_backward(cf(x), cf(weight), cf(mean), cf(rstd), cf(dy), f(dx), f(dweight), f(dbias), x.rows,
                          int(x.cols));
}

void CpuOps::rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) {
  fp32_contiguous(check_rmsnorm_forward(x, weight, y, rstd));
  cpu::rmsnorm_forward(cf(x), cf(weight), f(y), f(rstd), x.rows, int(x.cols));
}

void CpuOps::rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                              const View& dweight) {
  const OpCheck c = check_rmsnorm_backward(x, weight, rstd, dy, dx, dweight);
  fp32_contiguous(c);
  c.contiguous({{"dx", &dx}});
  cpu::rmsnorm_backward(cf(x), cf(weight), cf(rstd), cf(dy), f(dx), f(dweight), x.rows, int(x.cols));
}

}  // namespace emb
