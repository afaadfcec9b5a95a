// The plain types every backend's kernels and the Ops interface (kernels/ops.hpp) share: the
// attention masks and the packed index they read, RoPE modes, activations, sinusoid and dropout
// settings, AdamW settings and the encoders' attention segments and bias.
// Host-only definitions (no CUDA header), so the CPU kernels, the CUDA kernels, the batch
// layer and the model all name the same types.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/dtype.hpp"  // DType, the storage type of a view (math is fp32 on every backend)

namespace emb {

// Pointwise activations (MODEL.md): none, relu, silu(x) = x·sigmoid(x),
// gelu_tanh(x) = 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))).
enum class Activation : int32_t { none, relu, silu, gelu_tanh };

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

// The mask's name as the decks spell it ("full", "block_causal", "prefix", "cross"), for errors.
inline const char* attn_mask_name(AttnMask mask) {
  switch (mask) {
    case AttnMask::full: return "full";
    case AttnMask::block_causal: return "block_causal";
    case AttnMask::prefix: return "prefix";
    case AttnMask::cross: return "cross";
  }
  return "?";
}

// Rotary embedding (MODEL.md): the hd/2 pairs of each head split over (f, h, w) (d3) or all on f (d1).
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
