// Mask predicate and per-tile summaries of the varlen attention, shared by host and device
// (host code uses them for the skip-logic tests and the benchmark's FLOP counts).
//
// A tile of 32 consecutive tokens is summarised by its range of sample ids and, per group
// (grp 0 clean/context, grp 1 noisy/target, grp 2 DreamZero's states), its range of block ids.
// tiles_may_attend() is a necessary condition for any allowed (query, key) pair between two
// tiles, so a kernel may skip a tile pair when it is false and never changes the result.
// Padding tokens (seq < 0) attend nothing and are attended by nothing; a tile of padding only
// has an empty summary.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"  // EMB_HOST_DEVICE and the mask rules

namespace emb::cuda {

constexpr int kAttnTile = 32;

// A mask with the per-batch parameters it reads (teacher_forcing's), what the kernels carry.
struct MaskRule {
  AttnMask kind = AttnMask::full;
  TeacherForcing tf;
  EMB_HOST_DEVICE MaskRule(AttnMask k = AttnMask::full, TeacherForcing t = {}) : kind(k), tf(t) {}
};

struct TokenIndex {
  int32_t seq, blk, grp;
};

// MODEL.md "Packed batch" (kernels/op_types.hpp's attn_pair_allowed): query q may attend key k.
EMB_HOST_DEVICE inline bool tokens_attend(const MaskRule& mask, TokenIndex q, TokenIndex k) {
  if (q.seq < 0 || q.seq != k.seq) return false;
  switch (mask.kind) {
    case AttnMask::block_causal:
      return q.grp == 0 ? (k.grp == 0 && k.blk <= q.blk)
                        : ((k.grp == 0 && k.blk < q.blk) || (k.grp != 0 && k.blk == q.blk));
    case AttnMask::prefix: return k.grp == 0 || q.grp != 0;
    case AttnMask::teacher_forcing: return teacher_forcing_allows(q.grp, q.blk, k.grp, k.blk, mask.tf);
    default: return true;  // full, cross
  }
}

// Block ranges per group: grp 0, grp 1, grp ≥ 2 (empty: min > max).
struct TileSummary {
  int32_t seq_min, seq_max;
  int32_t blk0_min, blk0_max;
  int32_t blk1_min, blk1_max;
  int32_t blk2_min, blk2_max;
};

EMB_HOST_DEVICE inline TileSummary empty_tile() {
  constexpr int32_t lo = INT32_MIN, hi = INT32_MAX;
  return {hi, lo, hi, lo, hi, lo, hi, lo};
}

EMB_HOST_DEVICE inline void add_token(TileSummary& s, TokenIndex t) {
  if (t.seq < 0) return;
  s.seq_min = t.seq < s.seq_min ? t.seq : s.seq_min;
  s.seq_max = t.seq > s.seq_max ? t.seq : s.seq_max;
  int32_t& lo = t.grp == 0 ? s.blk0_min : t.grp == 1 ? s.blk1_min : s.blk2_min;
  int32_t& hi = t.grp == 0 ? s.blk0_max : t.grp == 1 ? s.blk1_max : s.blk2_max;
  lo = t.blk < lo ? t.blk : lo;
  hi = t.blk > hi ? t.blk : hi;
}

// The summary of the union of two tiles' tokens (a block of kernel tiles spanning several
// summaries: tiles_may_attend stays a necessary condition on the union).
EMB_HOST_DEVICE inline TileSummary merge_tiles(TileSummary a, const TileSummary& b) {
  a.seq_min = b.seq_min < a.seq_min ? b.seq_min : a.seq_min;
  a.seq_max = b.seq_max > a.seq_max ? b.seq_max : a.seq_max;
  a.blk0_min = b.blk0_min < a.blk0_min ? b.blk0_min : a.blk0_min;
  a.blk0_max = b.blk0_max > a.blk0_max ? b.blk0_max : a.blk0_max;
  a.blk1_min = b.blk1_min < a.blk1_min ? b.blk1_min : a.blk1_min;
  a.blk1_max = b.blk1_max > a.blk1_max ? b.blk1_max : a.blk1_max;
  a.blk2_min = b.blk2_min < a.blk2_min ? b.blk2_min : a.blk2_min;
  a.blk2_max = b.blk2_max > a.blk2_max ? b.blk2_max : a.blk2_max;
  return a;
}

// Whether block ranges [a_min, a_max] and [b_min, b_max] (both non-empty) share a value.
EMB_HOST_DEVICE inline bool ranges_meet(int32_t a_min, int32_t a_max, int32_t b_min, int32_t b_max) {
  return a_min <= b_max && b_min <= a_max;
}

EMB_HOST_DEVICE inline bool tiles_may_attend(const MaskRule& mask, const TileSummary& q, const TileSummary& k) {
  if (q.seq_min > q.seq_max || k.seq_min > k.seq_max) return false;
  if (q.seq_max < k.seq_min || k.seq_max < q.seq_min) return false;
  const bool q0 = q.blk0_min <= q.blk0_max, q1 = q.blk1_min <= q.blk1_max, q2 = q.blk2_min <= q.blk2_max;
  const bool k0 = k.blk0_min <= k.blk0_max, k1 = k.blk1_min <= k.blk1_max, k2 = k.blk2_min <= k.blk2_max;
  switch (mask.kind) {
    case AttnMask::block_causal: {
      // grp 1 and grp 2 are alike here ("grp ≠ 0"): their union's range.
      const bool qn = q1 || q2, kn = k1 || k2;
      const int32_t qn_min = q.blk1_min < q.blk2_min ? q.blk1_min : q.blk2_min;
      const int32_t qn_max = q.blk1_max > q.blk2_max ? q.blk1_max : q.blk2_max;
      const int32_t kn_min = k.blk1_min < k.blk2_min ? k.blk1_min : k.blk2_min;
      const int32_t kn_max = k.blk1_max > k.blk2_max ? k.blk1_max : k.blk2_max;
      return (q0 && k0 && k.blk0_min <= q.blk0_max) || (qn && k0 && k.blk0_min < qn_max) ||
             (qn && kn && ranges_meet(qn_min, qn_max, kn_min, kn_max));
    }
    case AttnMask::prefix: return k0 || q1 || q2;
    case AttnMask::teacher_forcing: {
      // Clean queries: key frame 0, or a key frame inside the window of some query frame (the
      // block end E(f) does not decrease with f). The frame ranges are read only where the tiles
      // hold clean tokens: an empty range's sentinels would overflow E.
      const int32_t fpb = mask.tf.frames_per_block;
      const bool clean = q0 && k0 &&
                         (k.blk0_min == 0 || (k.blk0_min <= teacher_forcing_block_end(q.blk0_max, fpb) &&
                                              k.blk0_max > teacher_forcing_block_end(q.blk0_min, fpb) - mask.tf.window));
      const bool noisy = q1 && ((k0 && k.blk0_min < q.blk1_max) ||
                                (k1 && ranges_meet(q.blk1_min, q.blk1_max, k.blk1_min, k.blk1_max)) ||
                                (k2 && ranges_meet(q.blk1_min, q.blk1_max, k.blk2_min, k.blk2_max)));
      const bool state = q2 && k2 && ranges_meet(q.blk2_min, q.blk2_max, k.blk2_min, k.blk2_max);
      return clean || noisy || state;
    }
    default: return true;
  }
}

// Token i of one side of the index (absent blk/grp arrays read as 0; beyond T: padding).
EMB_HOST_DEVICE inline TokenIndex token_at(const int32_t* seq, const int32_t* blk, const int32_t* grp, int64_t i,
                                           int64_t T) {
  if (i >= T) return {-1, 0, 0};
  return {seq[i], blk ? blk[i] : 0, grp ? grp[i] : 0};
}

}  // namespace emb::cuda
