// Rotary position embedding in place, exactly as MODEL.md and kernels/cpu/rope.hpp: the hd/2
// adjacent pairs (x[2k], x[2k+1]) of each head are split over axes (f, h, w) with
// c_h = c_w = (hd/2)/3, c_f = hd/2 − 2·c_h (3d), or all on f (1d); pair k of an axis with c
// pairs rotates by p·10000^(−k/c). Angles reach ~10³ rad, so they and their sin/cos are formed
// in double (once per token and pair, shared by all heads). The backward rotates by −φ. With
// token_modes (int32 [T] on the device, values of RopeMode) each token takes its own mode.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cuda {

// x [T, H*hd] rotated in place by pos [T, 3] (f, h, w), pos on the device.
template <class T>
void rope_forward(T* x, const int32_t* pos, int64_t T_, int H, int hd, RopeMode mode, const int32_t* token_modes,
                  cudaStream_t stream);
// dx: gradient w.r.t. the rotated tensor in, w.r.t. the input out (in place).
template <class T>
void rope_backward(T* dx, const int32_t* pos, int64_t T_, int H, int hd, RopeMode mode, const int32_t* token_modes,
                   cudaStream_t stream);

}  // namespace emb::cuda
