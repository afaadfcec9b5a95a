// HF's rotate-half rotary embedding (kernels/ops.hpp rope_half_forward; Qwen3, Llama), in place:
// in each head, the pair (x_i, x_{i+hd/2}), i < hd/2, rotates by angle_i(p) at position p:
//   y_i = x_i·cos − x_{i+hd/2}·sin,   y_{i+hd/2} = x_{i+hd/2}·cos + x_i·sin
// with the tables transformers builds in float32 (Qwen3RotaryEmbedding runs outside autocast):
//   inv_freq_i = float32(1 / float32(θ^float32(2i/hd))),  angle_i(p) = float32(p · inv_freq_i)
// and cos, sin of that float32 angle (here correctly rounded from double; torch's are within one
// ulp). θ^e is formed in double and rounded, which equals torch's float32 pow at every entry but
// one of head dim 128 (θ = 1e6, i = 37: one ulp of 3.4e-4, an angle error below 1e-7 at p = 1000).
// The backward of a rotation rotates the gradient by −angle.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/rope_half_inv_freq.hpp"

namespace emb::cpu {

// x [T, H·hd] rotated in place at positions pos [T].
void rope_half_forward(float* x, const int32_t* pos, int64_t T, int H, int hd, float theta);
// dx [T, H·hd]: gradient w.r.t. the rotated tensor in, w.r.t. the input out.
void rope_half_backward(float* dx, const int32_t* pos, int64_t T, int H, int hd, float theta);

}  // namespace emb::cpu
