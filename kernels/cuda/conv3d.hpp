// Convolution of channels-last clips on the GPU (kernels/ops.hpp conv3d_forward; the Wan VAE's
// causal Conv3d k3, stride-2 Conv2d and temporal conv), the twin of kernels/cpu/conv3d.hpp, as
// an implicit GEMM: M = output positions, N = Co, K = kt·kh·kw·Ci in the weight's (dt, dh, dw,
// ci) row order; the A operand is never materialised, each tile gathers its input rows (zeros
// where a window leaves the clip) straight from x. Forward only (the VAE is frozen).
//   tensor cores (bf16 storage, Ci and Co multiples of 8, 16-byte aligned tensors): blocks of
//     128 × 128 outputs, 8 warps of 32 × 64, K in steps of 32 through a 3-stage cp.async
//     pipeline (16-byte chunks of 8 channels: a chunk never straddles two taps), mma.m16n8k16
//     with ldmatrix operands (A row-major, B k-major read with .trans), fp32 accumulation, the
//     bias added in fp32 before the one rounding to bf16;
//   SIMT (fp32, and bf16 shapes the tensor-core kernel does not take: the VAE's conv1 from 3 or
//     12 channels): blocks of 64 × 64, 16-deep K tiles in shared memory, 4 × 4 per thread.
// NEVER RUN ON A GPU: tested under the emulation against the CPU (test_backend_ops); its speed
// against cuDNN's (bench_kernels' conv section) is to be measured when a GPU is lent.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cuda {

// Whether conv3d_forward runs on tensor cores for these operands (bf16 storage implied).
bool conv3d_tensor_cores(int64_t Ci, int64_t Co, const void* x, const void* weight, const void* y);

// y [batch·To·Ho·Wo, Co] = conv(x [batch·T·H·W, Ci]) + bias (null: none), weight [kt·kh·kw·Ci, Co]
// (all contiguous); the caller checked the shapes (ops_check).
template <class T>
void conv3d_forward(const T* x, int64_t Ci, const T* weight, const T* bias, T* y, int64_t Co, const ConvConfig& cfg,
                    cudaStream_t stream);

}  // namespace emb::cuda
