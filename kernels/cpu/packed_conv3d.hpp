// Frozen convolutions on the CPU (kernels/ops.hpp pack_conv3d / packed_conv3d_forward; the Wan
// VAE's causal Conv3d, stride-2 Conv2d and temporal conv): the same convolution as
// kernels/cpu/conv3d.hpp, as an implicit GEMM on the packed micro-kernel of the frozen linears
// (kernels/cpu/packed_tile.hpp), the weight packed once.
//
// Packed form: the weight [kt·kh·kw·Ci, Co] as kt packed linears of its time taps' row blocks
// [kh·kw·Ci, Co], back to back, so that a frame whose causal padding drops taps starts at a tap's
// first K block. The output positions are split into blocks of 96; a block gathers its input
// windows straight into the micro-kernel's row panels (runs of a pixel's channels copied, zeros
// where a window leaves the clip; no im2col matrix), runs every column panel over them, K block
// after K block, and adds the bias while the block is in cache. OpenMP over (output frame, block) pairs: the threads are
// the OpenMP team's only (no BLAS thread pool beside them), and a dynamic schedule lets a thread
// that the shared machine deschedules fall behind without stalling the others.
// Without AVX-512 the packed form is the weight itself and conv3d_forward computes.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

// Elements of the packed form of a weight [kt·spatial, Co] (spatial = kh·kw·Ci).
int64_t packed_conv3d_elements(int64_t kt, int64_t spatial, int64_t Co);
// packed[packed_conv3d_elements] = weight [kt·spatial, Co] in the packed form.
void pack_conv3d(const float* weight, int64_t kt, int64_t spatial, int64_t Co, float* packed);
// y [batch·To·Ho·Wo, Co] = conv(x [batch·T·H·W, Ci]) + bias (null: none), the weight packed.
void packed_conv3d_forward(const float* x, int64_t Ci, const float* packed, const float* bias, float* y, int64_t Co,
                           const ConvConfig& cfg);

}  // namespace emb::cpu
