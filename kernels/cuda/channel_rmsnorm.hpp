// The Wan VAE's channel RMS norm on the GPU (kernels/ops.hpp channel_rmsnorm_forward), the twin
// of kernels/cpu/channel_rmsnorm.hpp: y = act(x / max(‖x‖₂, 1e-12) · √C · gamma) per row, act
// none or silu, the sum of squares in double; y may be x. One warp per row (the VAE's rows are
// 96 to 640 channels, millions of them), storage fp32 or bf16, forward only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

template <class T>
void channel_rmsnorm_forward(const T* x, const T* gamma, bool silu, T* y, int64_t N, int64_t C, cudaStream_t stream);

}  // namespace emb::cuda
