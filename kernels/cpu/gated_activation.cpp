#include "kernels/cpu/gated_activation.hpp"

#include <vector>

#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {
constexpr int64_t kParallelElements = 1 << 14;
}

void gated_activation_forward(Activation act, const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                              float* y, int64_t ld_y, int64_t N, int64_t C) {
  parallel_for_scratch(
      N, N * C >= kParallelElements, [C] { return std::vector<float>(static_cast<size_t>(C)); },
      [=](std::vector<float>& activated, int64_t r) {
        activation_forward(act, gate + r * ld_gate, activated.data(), C);
        const float* u = up + r * ld_up;
        float* out = y + r * ld_y;
        for (int64_t c = 0; c < C; ++c) out[c] = activated[size_t(c)] * u[c];
      });
}

void gated_activation_backward(Activation act, const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                               const float* dy, int64_t ld_dy, float* dgate, int64_t ld_dgate, float* dup,
                               int64_t ld_dup, int64_t N, int64_t C) {
  parallel_for_scratch(
      N, N * C >= kParallelElements, [C] { return std::vector<float>(static_cast<size_t>(C)); },
      [=](std::vector<float>& scratch, int64_t r) {
        const float *g = gate + r * ld_gate, *u = up + r * ld_up, *d = dy + r * ld_dy;
        if (dgate) {  // dgate += act'(g)·(dy·up)
          for (int64_t c = 0; c < C; ++c) scratch[size_t(c)] = d[c] * u[c];
          activation_backward(act, g, scratch.data(), dgate + r * ld_dgate, C);
        }
        if (dup) {  // dup += dy·act(g)
          activation_forward(act, g, scratch.data(), C);
          float* du = dup + r * ld_dup;
          for (int64_t c = 0; c < C; ++c) du[c] += d[c] * scratch[size_t(c)];
        }
      });
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::gated_activation_forward(Activation act, const View& gate, const View& up, const View& y) {
  fp32(check_gated_activation("gated_activation_forward", act, gate, up, y, View{}, View{}));
  cpu::gated_activation_forward(act, cf(gate), gate.ld, cf(up), up.ld, f(y), y.ld, gate.rows, gate.cols);
}

void CpuOps::gated_activation_backward(Activation act, const View& gate, const View& up, const View& dy,
                                       const View& dgate, const View& dup) {
  fp32(check_gated_activation("gated_activation_backward", act, gate, up, dy, dgate, dup));
  cpu::gated_activation_backward(act, cf(gate), gate.ld, cf(up), up.ld, cf(dy), dy.ld, f(dgate), dgate.ld, f(dup),
                                 dup.ld, gate.rows, gate.cols);
}

}  // namespace emb
