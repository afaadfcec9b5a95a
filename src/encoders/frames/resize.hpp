// Image resampling as PyTorch's CPU kernels compute it (tests/encoders_ref/resize.py is the
// Python twin): separable, a table per axis of source indices and float32 weights, applied to
// the width first, then the height. Host kernels, no Ops entry: the frozen encoders' frames are
// preprocessed on the host by the loader (embpack, the prefetch thread), never on the device
// step, so a GPU twin would only move uint8 frames that are already on the host.
//   antialiased bilinear  GR00T's VideoResize (torchvision Resize(antialias=True) on float32
//                         = ATen _upsample_bilinear2d_aa): the triangle filter widened by the
//                         scale, weights computed in float32 exactly as ATen does and summed with
//                         one fused multiply-add per tap (bit-equal to torch 1.13's CPU kernel),
//                         because GR00T truncates the result to uint8 right after
//   bilinear              align_corners=False, no antialias (DreamZero 5B's 160×320 resize)
//   bicubic               A = −0.75, align_corners=False, no antialias, indices clamped at the
//                         edges (Wan's CLIP input); ATen mixes both axes in one pass, so these
//                         two agree with it to float32 rounding, not bit for bit
#pragma once
#include <cstdint>
#include <vector>

namespace emb::frames {

// out[i] = Σ_j weight[i·taps + j] · in[index[i·taps + j]], j = 0 .. taps−1 in order.
struct ResizeTable {
  int64_t in = 0, out = 0;
  int taps = 0;
  std::vector<int64_t> index;  // [out, taps], within [0, in)
  std::vector<float> weight;   // [out, taps]
  bool fused = false;          // one fma per tap (the antialiased kernel), else product then sum
};

ResizeTable aa_bilinear_table(int64_t in, int64_t out);
ResizeTable bilinear_table(int64_t in, int64_t out);
ResizeTable bicubic_table(int64_t in, int64_t out);

// src [H, W, C] (interleaved channels, float32) → dst [rows.out, cols.out, C]: the width pass
// (cols, cols.in = W) then the height pass (rows, rows.in = H). OpenMP over rows.
void resize_hwc(const float* src, int64_t C, const ResizeTable& rows, const ResizeTable& cols, float* dst);

}  // namespace emb::frames
