// Gated activations (kernels/ops.hpp gated_activation_*): y = act(gate)·up, SwiGLU with silu
// (Qwen3's MLP), gated GELU with gelu_tanh (umT5's FFN). gate, up, y are [N, C] with row strides
// (gate and up may be the two column halves of one GEMM output). The backward accumulates:
// dgate += dy·up·act'(gate), dup += dy·act(gate) (either may be null).
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

void gated_activation_forward(Activation act, const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                              float* y, int64_t ld_y, int64_t N, int64_t C);
void gated_activation_backward(Activation act, const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                               const float* dy, int64_t ld_dy, float* dgate, int64_t ld_dgate, float* dup,
                               int64_t ld_dup, int64_t N, int64_t C);

}  // namespace emb::cpu
