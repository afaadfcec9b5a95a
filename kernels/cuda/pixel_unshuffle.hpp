// Space (and time) to channels on the GPU (kernels/ops.hpp pixel_unshuffle_forward), the twin of
// kernels/cpu/pixel_unshuffle.hpp: the unshuffle order of kernels/op_types.hpp
// (unshuffle_source), each output the mean of `group` consecutive unshuffled channels (summed in
// order in fp32, then divided). One thread per output element; storage fp32 or bf16, forward only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cuda {

template <class T>
void pixel_unshuffle_forward(const T* x, int64_t C, T* y, const UnshuffleConfig& cfg, cudaStream_t stream);

}  // namespace emb::cuda
