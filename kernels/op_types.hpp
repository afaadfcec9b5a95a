// The plain types every backend's kernels and the Ops interface (kernels/ops.hpp) share: the
// attention masks and the packed index they read, RoPE modes, activations, sinusoid and dropout
// settings, AdamW settings and the encoders' attention segments and bias.
// Host-only definitions (no CUDA header), so the CPU kernels, the CUDA kernels, the batch
// layer and the model all name the same types.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/dtype.hpp"  // DType, the storage type of a view (math is fp32 on every backend)

// The rules below are also evaluated in CUDA kernels (kernels/cuda/attention_tiles.hpp).
#ifdef __CUDACC__
#define EMB_HOST_DEVICE __host__ __device__
#else
#define EMB_HOST_DEVICE
#endif

namespace emb {

// Pointwise activations (MODEL.md): none, relu, silu(x) = x·sigmoid(x),
// gelu_tanh(x) = 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))), gelu_erf(x) = 0.5x(1 + erf(x/√2)).
enum class Activation : int32_t { none, relu, silu, gelu_tanh, gelu_erf };
// The activations a linear fuses, each with a cost of its own in hardware files (hwprobe's
// activation_element_seconds, named by activation_name).
constexpr Activation kFusedActivations[] = {Activation::relu, Activation::silu, Activation::gelu_tanh,
                                            Activation::gelu_erf};
// The elementwise ops (by Ops method name) whose time is their arithmetic, not their bytes: rope's
// and the sinusoids' sines and cosines per element (0.4-2.4 GB/s on a CPU where the rest ran at
// 8-50), and the norms' row statistics and passes (5-12 GB/s there, the narrower the rows the
// slower: regression/plan_validation.md session 32), each with a cost per element of its own in
// hardware files, the norms' with a cost per row beside it (hwprobe's
// elementwise_element_seconds and elementwise_row_seconds; the planner's dry step counts their
// elements and rows).
constexpr const char* kArithmeticElementwiseOps[] = {
    "rope_forward",          "rope_backward",          "sinus_embedding",
    "layernorm_forward",     "layernorm_backward",     "rmsnorm_forward",
    "rmsnorm_backward",      "norm_modulate_forward",  "norm_modulate_backward",
    "residual_norm_modulate_forward"};
inline const char* activation_name(Activation a) {
  switch (a) {
    case Activation::relu: return "relu";
    case Activation::silu: return "silu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::gelu_erf: return "gelu_erf";
    case Activation::none: break;
  }
  return "none";
}

// Masks of packed attention (MODEL.md "Packed batch"), for query i and key j:
//   full             seq_i = seq_j
//   block_causal     seq_i = seq_j and (grp_i = 0: grp_j = 0 ∧ blk_j ≤ blk_i;
//                                       grp_i ≠ 0: (grp_j = 0 ∧ blk_j < blk_i) ∨ (grp_j ≠ 0 ∧ blk_j = blk_i))
//   prefix           seq_i = seq_j and (grp_j = 0 ∨ grp_i ≠ 0)
//   cross            seq_i = cseq_j (keys are context tokens; only k_seq is read)
//   teacher_forcing  seq_i = seq_j and teacher_forcing_allows (below): DreamZero's mask
// A token with seq < 0 is padding: no pair involving it is allowed.
enum class AttnMask : int32_t { full, block_causal, prefix, cross, teacher_forcing };

// DreamZero's teacher-forcing self-attention (MODEL.md "Family wan"), per batch: latent frames
// per block and the clean stream's window in latent frames (max_chunk·fpb + 1).
struct TeacherForcing {
  int32_t frames_per_block = 1;
  int32_t window = 1;
};

// The last latent frame of the block that clean frame f belongs to (frame 0 is a block of its own).
EMB_HOST_DEVICE inline int32_t teacher_forcing_block_end(int32_t frame, int32_t fpb) {
  return frame == 0 ? 0 : frame + (fpb - 1 - (frame - 1) % fpb);
}

// The teacher-forcing rule for tokens of one sample. grp 0: clean video, blk = its latent frame;
// grp 1: noisy video and actions, grp 2: states, blk = the first latent frame of their block
// (0 for noisy frame 0, 1 + b·fpb for block b):
//   clean frame f   sees clean frame 0 and the clean frames (E − W, E], E the end of f's block
//   noisy / action  sees the clean frames before its block and grp 1 and 2 tokens of its block
//   state           sees the states of its block
EMB_HOST_DEVICE inline bool teacher_forcing_allows(int32_t q_grp, int32_t q_blk, int32_t k_grp, int32_t k_blk,
                                                   TeacherForcing tf) {
  if (q_grp == 0) {
    if (k_grp != 0) return false;
    const int32_t end = teacher_forcing_block_end(q_blk, tf.frames_per_block);
    return k_blk == 0 || (k_blk <= end && k_blk > end - tf.window);
  }
  if (q_grp == 1) return k_grp == 0 ? k_blk < q_blk : k_blk == q_blk;
  return k_grp == 2 && k_blk == q_blk;
}

// The token index attention reads, in the memory of the backend that runs it.
struct AttnIndex {
  AttnMask mask = AttnMask::full;
  const int32_t* q_seq = nullptr;  // [Tq]
  const int32_t* q_blk = nullptr;  // [Tq] (block_causal, teacher_forcing)
  const int32_t* q_grp = nullptr;  // [Tq] (block_causal, prefix, teacher_forcing)
  const int32_t* k_seq = nullptr;  // [Tk] (the context's cseq for cross)
  const int32_t* k_blk = nullptr;  // [Tk]
  const int32_t* k_grp = nullptr;  // [Tk]
  TeacherForcing tf;               // teacher_forcing
};

// The token fields the rule below reads besides seq, per mask: grp under prefix, block_causal and
// teacher_forcing, blk under the last two (the others may leave them null). Tokens equal in seq and
// in the fields their mask reads are alike to the rule (kernels/cpu/attention_tile_masks.cpp).
inline bool attn_mask_reads_blk(AttnMask mask) {
  return mask == AttnMask::block_causal || mask == AttnMask::teacher_forcing;
}
inline bool attn_mask_reads_grp(AttnMask mask) { return attn_mask_reads_blk(mask) || mask == AttnMask::prefix; }

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
    case AttnMask::teacher_forcing:
      return teacher_forcing_allows(idx.q_grp[i], idx.q_blk[i], idx.k_grp[j], idx.k_blk[j], idx.tf);
  }
  return false;
}

// The mask's name as the decks spell it ("full", "block_causal", "prefix", "cross", "teacher_forcing"), for errors.
inline const char* attn_mask_name(AttnMask mask) {
  switch (mask) {
    case AttnMask::full: return "full";
    case AttnMask::block_causal: return "block_causal";
    case AttnMask::prefix: return "prefix";
    case AttnMask::cross: return "cross";
    case AttnMask::teacher_forcing: return "teacher_forcing";
  }
  return "?";
}

// Rotary embedding (MODEL.md): the hd/2 pairs of each head split over (f, h, w) (d3) or all on f (d1).
// A call may also give each token its own mode (RopeConfig::token_modes): DreamZero rotates its
// video tokens in 3d and its action and state tokens in 1d in one sequence.
enum class RopeMode : int32_t { none, d1, d3 };

// RMSNorm's eps on every backend (Wan's qk-norm); LayerNorm's is each call's (kernels/ops.hpp).
constexpr float kRmsNormEps = 1e-6f;

// Sinusoidal embedding of a timestep t over n = out.cols (MODEL.md): for k < n/2,
// f_k = exp(−ln(10⁴)·k/(n/2 − freq_shift)), out = [cos(t·f), sin(t·f)] (cos_first) or
// [sin(t·f), cos(t·f)]. Wan's sinusoidal_embedding_1d is {cos_first, 0}; diffusers'
// Timesteps(flip_sin_to_cos=True, downscale_freq_shift=1), GR00T-N1.5's time encoder, is
// {cos_first, 1}; the action encoders' SinusoidalPositionalEncoding is {sin first, 0}.
struct SinusConfig {
  bool cos_first = true;
  int freq_shift = 0;
};

// Inverted dropout (MODEL.md "Dropout"): element (r, c) of a [rows, cols] view is kept with
// probability 1 − p (and scaled by 1/(1 − p)) by a counter-based draw keyed by (seed, step, the
// row's sample id, site, the row's token index within its sample·cols + c), so every backend,
// packing, micro-batch split and rank count drops the same elements (kernels/dropout_keep.hpp).
struct DropoutConfig {
  float p = 0;        // drop probability in [0, 1)
  uint64_t seed = 0;  // run.seed
  int64_t step = 0;   // the optimizer step
  uint32_t site = 0;  // which dropout of the model (MODEL.md "Dropout")
};

// What keys a view's rows, in the backend's memory: row r is token token[r] of the micro-batch's
// sample slot seq[r] (seq < 0: padding, passed through), whose key is sample_id[seq[r]].
struct DropoutRows {
  const int32_t* seq = nullptr;        // [rows]
  const int32_t* token = nullptr;      // [rows]
  const int64_t* sample_id = nullptr;  // [samples]
};

// ---- the frozen encoders' attention (kernels/ops.hpp encoder_attention_forward) ----

// Variable-length segments of a packed encoder batch: segment s is query rows
// [q_offsets[s], q_offsets[s + 1]) attending key rows [k_offsets[s], k_offsets[s + 1]) (several
// images, or several texts, in one call; no pair crosses segments). Offsets are host memory
// (n + 1 ascending values from 0 each; a backend that needs them on the device copies them, so
// the op is not for a CUDA graph capture); k_offsets null means k_offsets = q_offsets
// (self-attention).
struct AttnSegments {
  const int64_t* q_offsets = nullptr;
  const int64_t* k_offsets = nullptr;
  int n = 0;
};

// The additive score bias of encoder attention, per head h:
//   none
//   dense             bias [H·Lq, Lk]: row h·Lq + i, column j (local indices), for segments
//                     that all have Lq queries and Lk keys
//   relative_buckets  bias [H, n_buckets] (a learned table, umT5's relative position bias) read
//                     at bucket[clamp((j − i) + rel_zero, 0, n_rel − 1)], local i and j;
//                     `buckets` int32 [n_rel] in backend memory holds the bucket function
//                     evaluated once per relative position (T5's log buckets, or any other)
enum class AttnBiasKind : int32_t { none, dense, relative_buckets };
struct AttnBias {
  AttnBiasKind kind = AttnBiasKind::none;
  const int32_t* buckets = nullptr;  // relative_buckets: [n_rel] in backend memory
  int n_rel = 0, rel_zero = 0;
};

// Encoder attention's heads (grouped-query: Hkv divides Hq) and scale.
struct EncoderAttnConfig {
  int q_heads = 0, kv_heads = 0, head_dim = 0;
  float scale = 0;  // on q·k: 1/√hd (SigLIP, Qwen3, CLIP, the VAE) or 1 (umT5)
  bool causal = false;
};

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


struct AdamWConfig {
  float lr = 1e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
};

// The gradient clip coefficient for a global norm: min(1, max_norm / (norm + 1e-6)); max_norm
// <= 0 disables clipping. The CUDA AdamW forms the same on the device from Σ g².
inline float clip_coefficient(double global_norm, float max_norm) {
  if (max_norm <= 0.0f) return 1.0f;
  return static_cast<float>(std::min(1.0, double(max_norm) / (global_norm + 1e-6)));
}

}  // namespace emb
