// Pointwise activations. Backward takes the forward input and accumulates into dx.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

// gelu_tanh(x) = 0.5x(1 + tanh(√(2/π)(x + 0.044715x³)))
void gelu_tanh_forward(const float* x, float* y, int64_t n);
void gelu_tanh_backward(const float* x, const float* dy, float* dx, int64_t n);
// gelu_erf(x) = 0.5x(1 + erf(x/√2)) (exact GELU: Wan's img_emb)
void gelu_erf_forward(const float* x, float* y, int64_t n);
void gelu_erf_backward(const float* x, const float* dy, float* dx, int64_t n);
// silu(x) = x·sigmoid(x)
void silu_forward(const float* x, float* y, int64_t n);
void silu_backward(const float* x, const float* dy, float* dx, int64_t n);
void relu_forward(const float* x, float* y, int64_t n);
void relu_backward(const float* x, const float* dy, float* dx, int64_t n);

// The one of those `act` names (act ≠ none).
void activation_forward(Activation act, const float* x, float* y, int64_t n);
void activation_backward(Activation act, const float* x, const float* dy, float* dx, int64_t n);

}  // namespace emb::cpu
