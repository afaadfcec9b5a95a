// Convolution of channels-last clips (kernels/op_types.hpp ConvConfig; the Wan VAE's causal
// Conv3d, stride-2 Conv2d and temporal conv), forward only: the VAE is frozen.
//
// Implicit GEMM: per output frame, only the time taps that land inside the clip take part (a
// causal conv's zero frames cost nothing), and per block of output positions their kh·kw·Ci
// input values are gathered into a [positions, taps·Ci] panel (zeros where the window leaves
// the clip) for one OpenBLAS GEMM with the taps' weight rows, which are contiguous because the
// weight is stored [kt·kh·kw·Ci, Co] in (dt, dh, dw, ci) order. A panel holds at most
// kPanelFloats values, so memory stays bounded at any clip size. A 1×1×1 stride-1 conv is one
// GEMM on x itself.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

// The time taps of output frame `to` that read frames inside the clip: dt in [first, end) reads
// frame t0 + dt (never empty: padding is narrower than the kernel).
struct TimeTaps {
  int t0 = 0, first = 0, end = 0;
};
TimeTaps time_taps(const ConvConfig& c, int to);

// y [batch·To·Ho·Wo, Co] = conv(x [batch·T·H·W, Ci]) + bias (bias null: none); weight [kt·kh·kw·Ci, Co].
void conv3d_forward(const float* x, int64_t Ci, const float* weight, const float* bias, float* y, int64_t Co,
                    const ConvConfig& cfg);

}  // namespace emb::cpu
