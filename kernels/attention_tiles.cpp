#include "kernels/attention_tiles.hpp"

#include <algorithm>

namespace emb {

namespace {

// blk/grp may be null (masks that do not read them): every token then counts as grp 0, blk 0.
std::vector<TileSummary> summarize(const int32_t* seq, const int32_t* blk, const int32_t* grp, int64_t T,
                                   int tile) {
  std::vector<TileSummary> tiles;
  tiles.reserve(size_t((T + tile - 1) / tile));  // one allocation, not one per doubling
  for (int64_t begin = 0; begin < T; begin += tile) {
    TileSummary s;
    s.begin = begin;
    s.end = std::min<int64_t>(T, begin + tile);
    for (int64_t t = s.begin; t < s.end; ++t) {
      if (seq[t] < 0) {
        s.has_padding = true;
        continue;
      }
      const int g = grp ? std::min(std::max(grp[t], 0), 2) : 0;
      const int32_t b = blk ? blk[t] : 0;
      s.seq_min = s.n_real ? std::min(s.seq_min, seq[t]) : seq[t];
      s.seq_max = s.n_real ? std::max(s.seq_max, seq[t]) : seq[t];
      s.blk_min[g] = s.n_grp[g] ? std::min(s.blk_min[g], b) : b;
      s.blk_max[g] = s.n_grp[g] ? std::max(s.blk_max[g], b) : b;
      ++s.n_real;
      ++s.n_grp[g];
    }
    tiles.push_back(s);
  }
  return tiles;
}

// Whether the grp/blk part of the mask (ignoring seq) allows some / every pair of the tiles.
struct Reach {
  bool some = false;
  bool every = true;
  // Adds the pairs (query grp gq, key grp gk) when both tiles hold such tokens.
  void add(const TileSummary& q, int gq, const TileSummary& k, int gk, bool some_pair, bool every_pair) {
    if (q.n_grp[gq] == 0 || k.n_grp[gk] == 0) return;
    some = some || some_pair;
    every = every && every_pair;
  }
};

// The summary with groups 1 and 2 as one ("grp ≠ 0"), as block_causal and prefix see them.
TileSummary nonzero_groups_merged(TileSummary s) {
  if (s.n_grp[2] == 0) return s;
  s.blk_min[1] = s.n_grp[1] ? std::min(s.blk_min[1], s.blk_min[2]) : s.blk_min[2];
  s.blk_max[1] = s.n_grp[1] ? std::max(s.blk_max[1], s.blk_max[2]) : s.blk_max[2];
  s.n_grp[1] += s.n_grp[2];
  s.n_grp[2] = 0;
  return s;
}

Reach block_causal_reach(const TileSummary& q_tile, const TileSummary& k_tile) {
  const TileSummary q = nonzero_groups_merged(q_tile), k = nonzero_groups_merged(k_tile);
  Reach r;
  // clean query, clean key: blk_j ≤ blk_i
  r.add(q, 0, k, 0, k.blk_min[0] <= q.blk_max[0], k.blk_max[0] <= q.blk_min[0]);
  // clean query, noisy key: never
  r.add(q, 0, k, 1, false, false);
  // noisy query, clean key: blk_j < blk_i
  r.add(q, 1, k, 0, k.blk_min[0] < q.blk_max[1], k.blk_max[0] < q.blk_min[1]);
  // noisy query, noisy key: blk_j = blk_i
  r.add(q, 1, k, 1, k.blk_min[1] <= q.blk_max[1] && q.blk_min[1] <= k.blk_max[1],
        q.blk_min[1] == q.blk_max[1] && k.blk_min[1] == k.blk_max[1] && q.blk_min[1] == k.blk_min[1]);
  return r;
}

Reach prefix_reach(const TileSummary& q_tile, const TileSummary& k_tile) {
  const TileSummary q = nonzero_groups_merged(q_tile), k = nonzero_groups_merged(k_tile);
  Reach r;
  r.add(q, 0, k, 0, true, true);
  r.add(q, 0, k, 1, false, false);
  r.add(q, 1, k, 0, true, true);
  r.add(q, 1, k, 1, true, true);
  return r;
}

// teacher_forcing (kernels/op_types.hpp), per pair of groups; the block end E(f) of a clean frame
// does not decrease with f, so the window bounds of a tile's frames lie between E(min) and E(max).
Reach teacher_forcing_reach(const TileSummary& q, const TileSummary& k, TeacherForcing tf) {
  auto same_block = [&](int gq, int gk) {
    const bool one_each = q.blk_min[gq] == q.blk_max[gq] && k.blk_min[gk] == k.blk_max[gk];
    return std::pair{q.blk_min[gq] <= k.blk_max[gk] && k.blk_min[gk] <= q.blk_max[gq],
                     one_each && q.blk_min[gq] == k.blk_min[gk]};
  };
  const int32_t end_lo = teacher_forcing_block_end(q.blk_min[0], tf.frames_per_block);
  const int32_t end_hi = teacher_forcing_block_end(q.blk_max[0], tf.frames_per_block);
  Reach r;
  // clean query, clean key: frame 0, or inside the window (E − W, E]
  r.add(q, 0, k, 0, k.blk_min[0] == 0 || (k.blk_min[0] <= end_hi && k.blk_max[0] > end_lo - tf.window),
        k.blk_max[0] == 0 || (k.blk_max[0] <= end_lo && k.blk_min[0] > end_hi - tf.window));
  r.add(q, 0, k, 1, false, false);
  r.add(q, 0, k, 2, false, false);
  // noisy or action query: clean frames before its block, grp 1 and 2 tokens of its block
  r.add(q, 1, k, 0, k.blk_min[0] < q.blk_max[1], k.blk_max[0] < q.blk_min[1]);
  const auto [meet1, all1] = same_block(1, 1);
  r.add(q, 1, k, 1, meet1, all1);
  const auto [meet2, all2] = same_block(1, 2);
  r.add(q, 1, k, 2, meet2, all2);
  // state query: the states of its block
  r.add(q, 2, k, 0, false, false);
  r.add(q, 2, k, 1, false, false);
  const auto [meet_s, all_s] = same_block(2, 2);
  r.add(q, 2, k, 2, meet_s, all_s);
  return r;
}

}  // namespace

AttnTiles::AttnTiles(const AttnIndex& idx, int64_t Tq, int64_t Tk) : mask_(idx.mask), tf_(idx.tf) {
  const bool blk = attn_mask_reads_blk(idx.mask), grp = attn_mask_reads_grp(idx.mask);
  q_ = summarize(idx.q_seq, blk ? idx.q_blk : nullptr, grp ? idx.q_grp : nullptr, Tq, kAttnTileQ);
  k_ = summarize(idx.k_seq, blk ? idx.k_blk : nullptr, grp ? idx.k_grp : nullptr, Tk, kAttnTileK);
}

TileKind AttnTiles::kind(int64_t qt, int64_t kt) const {
  const TileSummary& q = q_[qt];
  const TileSummary& k = k_[kt];
  if (q.n_real == 0 || k.n_real == 0 || q.seq_max < k.seq_min || k.seq_max < q.seq_min) return TileKind::skip;
  Reach reach;
  reach.some = true;
  if (mask_ == AttnMask::block_causal) reach = block_causal_reach(q, k);
  if (mask_ == AttnMask::prefix) reach = prefix_reach(q, k);
  if (mask_ == AttnMask::teacher_forcing) reach = teacher_forcing_reach(q, k, tf_);
  if (!reach.some) return TileKind::skip;
  const bool one_sample = !q.has_padding && !k.has_padding && q.seq_min == q.seq_max && k.seq_min == k.seq_max &&
                          q.seq_min == k.seq_min;
  return one_sample && reach.every ? TileKind::dense : TileKind::masked;
}

int64_t AttnTiles::pairs(TileKind of_kind) const {
  int64_t n = 0;
  for (int64_t qt = 0; qt < n_q(); ++qt)
    for (int64_t kt = 0; kt < n_k(); ++kt)
      if (kind(qt, kt) == of_kind) n += (q_[qt].end - q_[qt].begin) * (k_[kt].end - k_[kt].begin);
  return n;
}

}  // namespace emb
