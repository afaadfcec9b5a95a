#include "kernels/cpu/norm_modulate.hpp"

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/norm.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {
constexpr int64_t kParallelElements = 1 << 15;
}

void modulate_forward(const float* x, const float* scale, const float* shift, int64_t ld_mod, float* y, int64_t N,
                      int C) {
  parallel_for(N, N * C >= kParallelElements, [=](int64_t i) {
    const float* xi = x + i * C;
    const float* sc = scale + i * ld_mod;
    const float* sh = shift + i * ld_mod;
    float* yi = y + i * C;
    for (int c = 0; c < C; ++c) yi[c] = xi[c] * (1.0f + sc[c]) + sh[c];
  });
}

void modulate_backward(const float* x, const float* scale, int64_t ld_mod, const float* dy, float* dx, float* dscale,
                       float* dshift, int64_t N, int C) {
  parallel_for(N, N * C >= kParallelElements, [=](int64_t i) {
    const float* xi = x + i * C;
    const float* dyi = dy + i * C;
    if (dx) {
      const float* sc = scale + i * ld_mod;
      float* dxi = dx + i * C;
      for (int c = 0; c < C; ++c) dxi[c] += dyi[c] * (1.0f + sc[c]);
    }
    if (dscale) {
      float* dsc = dscale + i * ld_mod;
      for (int c = 0; c < C; ++c) dsc[c] += dyi[c] * xi[c];
    }
    if (dshift) {
      float* dsh = dshift + i * ld_mod;
      for (int c = 0; c < C; ++c) dsh[c] += dyi[c];
    }
  });
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                                   const View& y, const View& mean, const View& rstd, float eps) {
  const OpCheck c = check_norm_modulate_forward(x, scale, shift, normed, y, mean, rstd);
  fp32(c);
  c.contiguous({{"x", &x}, {"normed", &normed}, {"y", &y}});
  cpu::layernorm_forward(cf(x), nullptr, nullptr, f(normed), f(mean), f(rstd), x.rows, int(x.cols), eps);
  cpu::modulate_forward(cf(normed), cf(scale), cf(shift), scale.ld, f(y), x.rows, int(x.cols));
}

void CpuOps::norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                                    const View& rstd, const View& dy, const View& dx, const View& dscale,
                                    const View& dshift) {
  const OpCheck c = check_norm_modulate_backward(x, normed, scale, mean, rstd, dy, dx, dscale, dshift);
  fp32(c);
  c.contiguous({{"x", &x}, {"normed", &normed}, {"dy", &dy}, {"dx", &dx}});
  float* dn = scratch(x.size());
  cpu::modulate_backward(cf(normed), cf(scale), scale.ld, cf(dy), dn, f(dscale), f(dshift), x.rows, int(x.cols));
  cpu::layernorm_backward(cf(x), nullptr, cf(mean), cf(rstd), dn, f(dx), nullptr, nullptr, x.rows, int(x.cols));
}

// No fused loop: the reference is the three ops the fusion replaces, in their order.
void CpuOps::residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                            const View& scale, const View& shift, const View& normed, const View& y,
                                            const View& mean, const View& rstd, float eps) {
  fp32(check_residual_norm_modulate_forward(x, gate, r, x_in, scale, shift, normed, y, mean, rstd));
  CpuOps::gated_residual_forward(x, gate, r);
  if (!x_in.absent()) CpuOps::copy(x, x_in);
  CpuOps::norm_modulate_forward(x, scale, shift, normed, y, mean, rstd, eps);
}

}  // namespace emb
