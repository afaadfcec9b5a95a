// Kernels that mix storage types: with bf16 activations (model.precision = bf16 on CUDA) the
// parameter gradients and the residual stream stay fp32, beside bf16 data. A wider type is
// always the data's own or fp32 beside bf16.
#pragma once
#include <algorithm>

#include "kernels/cuda/vector_access.cuh"

namespace emb::cuda {

// The vector width of a kernel reading several storage types: 16 bytes of the widest type,
// V·sizeof(T) of the others (bf16×4: 8 bytes beside fp32×4).
template <class... Ts>
constexpr int kMixedVectorWidth = std::min({kVectorWidth<Ts>...});

}  // namespace emb::cuda

// Explicit instantiation for each storage type with one possibly wider type: X(T, W), W = T or
// fp32 beside bf16 (the parameter gradients' type, or the residual stream's).
#define EMB_CUDA_FOR_STORAGE_AND_WIDE(X) X(float, float) X(__nv_bfloat16, __nv_bfloat16) X(__nv_bfloat16, float)
// X(T, W1, W2) with two (a norm's residual stream and its parameter gradients).
#define EMB_CUDA_FOR_STORAGE_AND_TWO_WIDE(X)                                                                    \
  X(float, float, float) X(__nv_bfloat16, __nv_bfloat16, __nv_bfloat16) X(__nv_bfloat16, __nv_bfloat16, float) \
  X(__nv_bfloat16, float, __nv_bfloat16) X(__nv_bfloat16, float, float)
