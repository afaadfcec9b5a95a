// Rotary position embedding, in place, exactly as MODEL.md: the hd/2 adjacent pairs of each
// head are split over axes (f, h, w) with c_h = c_w = (hd/2)/3 and c_f = hd/2 − 2·c_h (3d),
// or all on f (1d). Pair k of an axis with c pairs rotates by p·10000^(−k/c). With token_modes
// (int32 [T], values of RopeMode) each token takes its own mode instead of `mode`.
// The backward of a rotation is the inverse rotation of the gradient.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

using emb::RopeMode;  // kernels/op_types.hpp

// x [T, H*hd] rotated in place by the positions pos [T, 3] (f, h, w).
void rope_forward(float* x, const int32_t* pos, int64_t T, int H, int hd, RopeMode mode,
                  const int32_t* token_modes = nullptr);
// dx [T, H*hd]: gradient w.r.t. the rotated tensor in, gradient w.r.t. the input out (in place).
void rope_backward(float* dx, const int32_t* pos, int64_t T, int H, int hd, RopeMode mode,
                   const int32_t* token_modes = nullptr);

}  // namespace emb::cpu
