#include "kernels/cpu/channel_rmsnorm.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

void channel_rmsnorm_forward(const float* x, const float* gamma, Activation act, float* y, int64_t N, int64_t C) {
  const double root_c = std::sqrt(double(C));
  parallel_for(N, N * C >= (1 << 15), [=](int64_t i) {
    const float* xi = x + i * C;
    float* yi = y + i * C;
    double ss = 0;
#pragma omp simd reduction(+ : ss)
    for (int64_t c = 0; c < C; ++c) ss += double(xi[c]) * xi[c];
    const float scale = float(root_c / std::max(std::sqrt(ss), 1e-12));
    for (int64_t c = 0; c < C; ++c) yi[c] = xi[c] * scale * gamma[c];
    if (act == Activation::silu) silu_forward(yi, yi, C);
  });
}

}  // namespace emb::cpu

// ---- CpuOps entry (kernels/ops.hpp) ----

namespace emb {

void CpuOps::channel_rmsnorm_forward(const View& x, const View& gamma, Activation act, const View& y) {
  fp32(check_channel_rmsnorm(x, gamma, act, y));
  cpu::channel_rmsnorm_forward(cf(x), cf(gamma), act, f(y), x.rows, x.cols);
}

}  // namespace emb
