// Gated activations on the GPU (kernels/ops.hpp gated_activation_*), the twin of
// kernels/cpu/gated_activation.hpp: y = act(gate)·up with row strides; the backward
// accumulates dgate += dy·up·act'(gate), dup += dy·act(gate) (either may be null).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/activation.hpp"

namespace emb::cuda {

template <class T>
void gated_activation_forward(Activation act, const T* gate, int64_t ld_gate, const T* up, int64_t ld_up, T* y,
                              int64_t ld_y, int64_t N, int64_t C, cudaStream_t stream);
template <class T>
void gated_activation_backward(Activation act, const T* gate, int64_t ld_gate, const T* up, int64_t ld_up, const T* dy,
                               int64_t ld_dy, T* dgate, int64_t ld_dgate, T* dup, int64_t ld_dup, int64_t N, int64_t C,
                               cudaStream_t stream);

}  // namespace emb::cuda
