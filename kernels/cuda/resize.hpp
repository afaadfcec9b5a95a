// Image resampling on the GPU (kernels/ops.hpp resize_forward), the twin of the CPU's table
// kernels (kernels/cpu/resize.hpp): the same taps (kernels/resize_taps.hpp), the width pass's
// value of each row tap formed first, then the height pass over them, each sum in tap order
// with unfused products (__fmul_rn, __fadd_rn) as the CPU's loops under -ffp-contract=off, so
// both backends give the same bits. One thread per output element; storage fp32 or bf16.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cuda {

template <class T>
void resize_forward(const T* x, int64_t C, T* y, const ResizeConfig& cfg, cudaStream_t stream);

}  // namespace emb::cuda
