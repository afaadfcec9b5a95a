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

// Rotary embedding (MODEL.md): the hd/2 pairs of each head split over (f, h, w) (d3) or all on f (d1).
// A call may also give each token its own mode (RopeConfig::token_modes): DreamZero rotates its
// video tokens in 3d and its action and state tokens in 1d in one sequence.
enum class RopeMode : int32_t { none, d1, d3 };

struct AdamWConfig {
  float lr = 1e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
};

}  // namespace emb
