// Mask predicate and per-tile summaries of the varlen attention, shared by host and device
// (host code uses them for the skip-logic tests and the benchmark's FLOP counts).
//
// A tile of 32 consecutive tokens is summarised by its range of sample ids and, per group
// (grp 0 clean/context, grp 1 noisy/target), its range of block ids. tiles_may_attend() is a
// necessary condition for any allowed (query, key) pair between two tiles, so a kernel may
// skip a tile pair when it is false and never changes the result. Padding tokens (seq < 0)
// attend nothing and are attended by nothing; a tile of padding only has an empty summary.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

#ifdef __CUDACC__
#define EMB_HOST_DEVICE __host__ __device__
#else
#define EMB_HOST_DEVICE
#endif

namespace emb::cuda {

constexpr int kAttnTile = 32;

struct TokenIndex {
  int32_t seq, blk, grp;
};

// MODEL.md "Packed batch": query q may attend key k.
EMB_HOST_DEVICE inline bool tokens_attend(AttnMask mask, TokenIndex q, TokenIndex k) {
  if (q.seq < 0 || q.seq != k.seq) return false;
  switch (mask) {
    case AttnMask::block_causal:
      return q.grp == 0 ? (k.grp == 0 && k.blk <= q.blk)
                        : ((k.grp == 0 && k.blk < q.blk) || (k.grp != 0 && k.blk == q.blk));
    case AttnMask::prefix: return k.grp == 0 || q.grp != 0;
    default: return true;  // full, cross
  }
}

struct TileSummary {
  int32_t seq_min, seq_max;
  int32_t blk0_min, blk0_max;  // block range of grp 0 tokens (empty: min > max)
  int32_t blk1_min, blk1_max;  // block range of grp 1 tokens
};

EMB_HOST_DEVICE inline TileSummary empty_tile() {
  constexpr int32_t lo = INT32_MIN, hi = INT32_MAX;
  return {hi, lo, hi, lo, hi, lo};
}

EMB_HOST_DEVICE inline void add_token(TileSummary& s, TokenIndex t) {
  if (t.seq < 0) return;
  s.seq_min = t.seq < s.seq_min ? t.seq : s.seq_min;
  s.seq_max = t.seq > s.seq_max ? t.seq : s.seq_max;
  int32_t& lo = t.grp == 0 ? s.blk0_min : s.blk1_min;
  int32_t& hi = t.grp == 0 ? s.blk0_max : s.blk1_max;
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
  return a;
}

EMB_HOST_DEVICE inline bool tiles_may_attend(AttnMask mask, const TileSummary& q, const TileSummary& k) {
  if (q.seq_min > q.seq_max || k.seq_min > k.seq_max) return false;
  if (q.seq_max < k.seq_min || k.seq_max < q.seq_min) return false;
  const bool q0 = q.blk0_min <= q.blk0_max, q1 = q.blk1_min <= q.blk1_max;
  const bool k0 = k.blk0_min <= k.blk0_max, k1 = k.blk1_min <= k.blk1_max;
  switch (mask) {
    case AttnMask::block_causal:
      return (q0 && k0 && k.blk0_min <= q.blk0_max) || (q1 && k0 && k.blk0_min < q.blk1_max) ||
             (q1 && k1 && k.blk1_min <= q.blk1_max && q.blk1_min <= k.blk1_max);
    case AttnMask::prefix: return k0 || q1;
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
