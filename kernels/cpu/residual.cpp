#include "kernels/cpu/residual.hpp"

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {
constexpr int64_t kParallelElements = 1 << 15;
}

void gated_residual_forward(float* x, const float* gate, int64_t ld_gate, const float* y, int64_t N, int C) {
  parallel_for(N, N * C >= kParallelElements, [=](int64_t i) {
    float* xi = x + i * C;
    const float* yi = y + i * C;
    if (gate) {
      const float* gi = gate + i * ld_gate;
      for (int c = 0; c < C; ++c) xi[c] += gi[c] * yi[c];
    } else {
      for (int c = 0; c < C; ++c) xi[c] += yi[c];
    }
  });
}

void gated_residual_backward(const float* gate, int64_t ld_gate, const float* y, const float* dx, float* dy,
                             float* dgate, int64_t N, int C) {
  parallel_for(N, N * C >= kParallelElements, [=](int64_t i) {
    const float* dxi = dx + i * C;
    if (dy) {
      float* dyi = dy + i * C;
      if (gate) {
        const float* gi = gate + i * ld_gate;
        for (int c = 0; c < C; ++c) dyi[c] += dxi[c] * gi[c];
      } else {
        for (int c = 0; c < C; ++c) dyi[c] += dxi[c];
      }
    }
    if (dgate) {
      const float* yi = y + i * C;
      float* dgi = dgate + i * ld_gate;
      for (int c = 0; c < C; ++c) dgi[c] += dxi[c] * yi[c];
    }
  });
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::gated_residual_forward(const View& x, const View& gate, const View& y) {
  const OpCheck c = check_gated_residual_forward(x, gate, y);
  fp32(c);
  c.contiguous({{"x", &x}, {"y", &y}});
  cpu::gated_residual_forward(f(x), cf(gate), gate.ld, cf(y), x.rows, int(x.cols));
}

void CpuOps::gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                                     const View& dgate) {
  const OpCheck c = check_gated_residual_backward(gate, y, dx, dy, dgate);
  fp32(c);
  c.contiguous({{"y", &y}, {"dx", &dx}, {"dy", &dy}});
  cpu::gated_residual_backward(cf(gate), gate.ld, cf(y), cf(dx), f(dy), f(dgate), y.rows, int(y.cols));
}

}  // namespace emb
