// Inverted dropout over the rows of a packed batch (MODEL.md "Dropout"), as kernels/cpu/dropout.hpp:
// the keep-mask is drawn from Philox (kernels/dropout_keep.hpp), never stored, so the forward,
// the backward, a recomputed forward and the CPU backend all drop the same elements. One thread
// per four consecutive elements of a row's site indices (one Philox block). Rows with seq < 0
// (padding) pass through.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cuda {

// y = x·keep/(1 − p) for x [N, C] (y may be x)
template <class T>
void dropout_forward(const T* x, T* y, int64_t N, int C, const DropoutConfig& cfg, const DropoutRows& rows,
                     cudaStream_t stream);
// dx += dy·keep/(1 − p)
template <class T>
void dropout_backward(const T* dy, T* dx, int64_t N, int C, const DropoutConfig& cfg, const DropoutRows& rows,
                      cudaStream_t stream);

}  // namespace emb::cuda
