// The plain types every backend's kernels and the Ops interface (kernels/ops.hpp) share: the
// attention masks and the packed index they read, RoPE modes, activations and AdamW settings.
// Host-only definitions (no CUDA header), so the CPU kernels, the CUDA kernels, the batch
// layer and the model all name the same types.
#pragma once
#include <cstdint>

#include "core/dtype.hpp"  // DType, the storage type of a view (math is fp32 on every backend)

// The rules below are also evaluated in CUDA kernels (kernels/cuda/attention_tiles.hpp).
#ifdef __CUDACC__
#define EMB_HOST_DEVICE __host__ __device__
#else
#define EMB_HOST_DEVICE
#endif

namespace emb {

// The LayerNorm/RMSNorm epsilon of MODEL.md unless an op is given another.
constexpr float kNormEps = 1e-6f;

// Pointwise activations (MODEL.md): none, relu, silu(x) = x·sigmoid(x),
// gelu_tanh(x) = 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))), gelu_erf(x) = 0.5x(1 + erf(x/√2)).
enum class Activation : int32_t { none, relu, silu, gelu_tanh, gelu_erf };

// Masks of packed attention (MODEL.md "Packed batch"), for query i and key j:
//   full          seq_i = seq_j
//   block_causal  seq_i = seq_j and (grp_i = 0: grp_j = 0 ∧ blk_j ≤ blk_i;
//                                    grp_i = 1: (grp_j = 0 ∧ blk_j < blk_i) ∨ (grp_j = 1 ∧ blk_j = blk_i))
//   prefix        seq_i = seq_j and (grp_j = 0 ∨ grp_i = 1)
//   cross         seq_i = cseq_j (keys are context tokens; only k_seq is read)
// A token with seq < 0 is padding: no pair involving it is allowed.
enum class AttnMask : int32_t { full, block_causal, prefix, cross };

// The token index attention reads, in the memory of the backend that runs it.
struct AttnIndex {
  AttnMask mask = AttnMask::full;
  const int32_t* q_seq = nullptr;  // [Tq]
  const int32_t* q_blk = nullptr;  // [Tq] (block_causal)
  const int32_t* q_grp = nullptr;  // [Tq] (block_causal, prefix)
  const int32_t* k_seq = nullptr;  // [Tk] (the context's cseq for cross)
  const int32_t* k_blk = nullptr;  // [Tk]
  const int32_t* k_grp = nullptr;  // [Tk]
};

// The scalar mask rule: true iff query i may attend key j under `idx` (host memory). Every
// backend's tiles must agree with it; --plan counts pairs with it.
inline bool attn_pair_allowed(const AttnIndex& idx, int64_t i, int64_t j) {
  const int32_t s = idx.q_seq[i];
  if (s < 0 || s != idx.k_seq[j]) return false;
  switch (idx.mask) {
    case AttnMask::full:
    case AttnMask::cross:
      return true;
    case AttnMask::prefix:
      return idx.k_grp[j] == 0 || idx.q_grp[i] != 0;
    case AttnMask::block_causal:
      if (idx.q_grp[i] == 0) return idx.k_grp[j] == 0 && idx.k_blk[j] <= idx.q_blk[i];
      return idx.k_grp[j] == 0 ? idx.k_blk[j] < idx.q_blk[i] : idx.k_blk[j] == idx.q_blk[i];
  }
  return false;
}

// Rotary embedding (MODEL.md): the hd/2 pairs of each head split over (f, h, w) (d3) or all on f (d1).
enum class RopeMode : int32_t { none, d1, d3 };

// ---- the Wan VAE's and CLIP's video ops (issue 34): channels-last clips ----
// A batch of video clips lies in a [rows, C] view one position per row, in (clip, frame, row,
// column) order: `batch` clips of frames × height × width positions, C channels each.

// Convolution (the VAE's causal Conv3d k3, its stride-2 Conv2d and temporal stride-2 conv; a 2D
// conv is kt = 1), forward only: x [batch·T·H·W, Ci] → y [batch·To·Ho·Wo, Co] with
//   y[n, t, h, w] = bias + Σ_{dt, dh, dw} x[n, t·st + dt − pad_front, h·sh + dh − pad_top,
//                                            w·sw + dw − pad_left] · W[dt, dh, dw]
// x = 0 outside the clip (zero padding: a causal conv pads pad_front = kt − 1 frames in front and
// none behind). weight [kt·kh·kw·Ci, Co], row ((dt·kh + dh)·kw + dw)·Ci + ci (upstream's
// [Co, Ci, kt, kh, kw] permuted), bias [1, Co] or absent. Output sizes To = (T + pad_front +
// pad_back − kt) / st + 1 and alike, at least 1.
struct ConvConfig {
  int batch = 1, frames = 1, height = 1, width = 1;
  int kt = 1, kh = 1, kw = 1;
  int st = 1, sh = 1, sw = 1;
  int pad_front = 0, pad_back = 0, pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int out_frames() const { return (frames + pad_front + pad_back - kt) / st + 1; }
  int out_height() const { return (height + pad_top + pad_bottom - kh) / sh + 1; }
  int out_width() const { return (width + pad_left + pad_right - kw) / sw + 1; }
  int64_t in_rows() const { return int64_t(batch) * frames * height * width; }
  int64_t out_rows() const { return int64_t(batch) * out_frames() * out_height() * out_width(); }
  int64_t taps() const { return int64_t(kt) * kh * kw; }
};

// Space (and time) to channels: output cell (t, h, w) of a clip gathers the ft × fs × fs input
// positions (t·ft + dt − pad_front, h·fs + dh, w·fs + dw) (zero for a frame before 0) into
// unshuffled channel c·F + k, F = ft·fs², k = dt·fs² + dh·fs + dw (rows first) or
// dt·fs² + dw·fs + dh (columns_first: Wan2.2's 2×2 patchify, einops "(c r q)"); y's channel o is
// the mean of unshuffled channels [o·group, (o + 1)·group): group 1 is the unshuffle itself
// (VAE38's patchify, CLIP's 14 × 14 patch rows), group > 1 the average pooling of VAE38's
// AvgDown3D shortcut. x [batch·T·H·W, C] → y [batch·To·(H/fs)·(W/fs), C·F/group],
// To = (T + pad_front)/ft; fs divides H and W, ft divides T + pad_front, group divides C·F.
struct UnshuffleConfig {
  int batch = 1, frames = 1, height = 1, width = 1;
  int ft = 1, fs = 1;
  int pad_front = 0;
  bool columns_first = false;
  int group = 1;
  int out_frames() const { return (frames + pad_front) / ft; }
};

// The input channel and offsets (from the output cell's first frame, row and column) that
// unshuffled channel u reads: the order UnshuffleConfig defines, on every backend.
struct UnshuffleSource {
  int64_t c;
  int dt, dh, dw;
};
EMB_HOST_DEVICE inline UnshuffleSource unshuffle_source(int64_t u, int ft, int fs, bool columns_first) {
  const int per_channel = ft * fs * fs;
  const int k = int(u % per_channel), in_frame = k % (fs * fs);
  const int a = in_frame / fs, b = in_frame % fs;  // (dh, dw), or (dw, dh) columns first
  return {u / per_channel, k / (fs * fs), columns_first ? b : a, columns_first ? a : b};
}

// Image resampling as ATen computes it (kernels/cpu/resize.hpp): bilinear (align_corners False,
// no antialias: DreamZero 5B's 160 × 320 frames) or bicubic (A = −0.75, edge-clamped taps, no
// antialias, values not clamped: CLIP's 224 × 224 input). x [batch·H·W, C] → y
// [batch·Ho·Wo, C], the width pass then the height pass, each output a sum over its taps in
// order (fp32).
enum class ResizeMode : int32_t { bilinear, bicubic };
struct ResizeConfig {
  ResizeMode mode = ResizeMode::bilinear;
  int batch = 1, in_height = 1, in_width = 1, out_height = 1, out_width = 1;
};

struct AdamWConfig {
  float lr = 1e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
};

}  // namespace emb
