// Pointwise activations (MODEL.md), as kernels/cpu/activation.hpp: the backward takes the
// forward input and accumulates into dx.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/op_types.hpp"  // Activation

namespace emb::cuda {

// y = act(x), act ≠ none
template <class T>
void activation_forward(Activation act, const T* x, T* y, int64_t n, cudaStream_t stream);
// dx += act'(x)·dy
template <class T>
void activation_backward(Activation act, const T* x, const T* dy, T* dx, int64_t n, cudaStream_t stream);

}  // namespace emb::cuda
