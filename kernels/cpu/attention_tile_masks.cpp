#include "kernels/cpu/attention_tile_masks.hpp"

#include <utility>

#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {

// One side's token index (queries or keys) as the mask rule reads it.
struct Tokens {
  AttnMask mask;
  const int32_t *seq, *grp, *blk;
  // Whether the rule sees tokens a and b alike: seq always, grp and blk only under the masks that
  // read them (attn_mask_reads_grp / _blk; the others may leave them null).
  bool alike(int64_t a, int64_t b) const {
    return seq[a] == seq[b] && (!attn_mask_reads_grp(mask) || grp[a] == grp[b]) &&
           (!attn_mask_reads_blk(mask) || blk[a] == blk[b]);
  }
};

// Bits [first, end) of a word, 0 <= first < end <= 64.
uint64_t bit_run(int64_t first, int64_t end) {
  const uint64_t ones = end - first == 64 ? ~uint64_t{0} : (uint64_t{1} << (end - first)) - 1;
  return ones << first;
}

// The rows of one masked tile pair. The rule sees runs of alike tokens alike (packed samples,
// blocks: 13 to 64 tokens a run), so it is decided once per (query run, key run): a query alike
// to the one before copies its row, and each key run sets its bits at once.
void decide_tile(const AttnIndex& idx, const Tokens& queries, const Tokens& keys, const TileSummary& qs,
                 const TileSummary& ks, uint64_t* rows) {
  int64_t run_begin[kAttnTileK + 1];  // the key runs: [run_begin[r], run_begin[r + 1])
  int n_runs = 0;
  for (int64_t j = ks.begin; j < ks.end; ++j)
    if (j == ks.begin || !keys.alike(j, j - 1)) run_begin[n_runs++] = j;
  run_begin[n_runs] = ks.end;
  for (int64_t i = qs.begin; i < qs.end; ++i, ++rows) {
    if (i > qs.begin && queries.alike(i, i - 1)) {
      *rows = rows[-1];
      continue;
    }
    for (int r = 0; r < n_runs; ++r)
      if (attn_pair_allowed(idx, i, run_begin[r]))
        *rows |= bit_run(run_begin[r] - ks.begin, run_begin[r + 1] - ks.begin);
  }
}

}  // namespace

AttnTileMasks::AttnTileMasks(const AttnTiles& tiles, const AttnIndex& idx)
    : n_k_(tiles.n_k()), slot_(size_t(tiles.n_q() * tiles.n_k()), -1) {
  std::vector<std::pair<int64_t, int64_t>> masked;  // (qt, kt) per masked tile, in slot order
  for (int64_t qt = 0; qt < tiles.n_q(); ++qt)
    for (int64_t kt = 0; kt < n_k_; ++kt)
      if (tiles.kind(qt, kt) == TileKind::masked) {
        slot_[qt * n_k_ + kt] = static_cast<int32_t>(masked.size());
        masked.emplace_back(qt, kt);
      }
  bits_.assign(masked.size() * kAttnTileQ, 0);
  const Tokens queries{idx.mask, idx.q_seq, idx.q_grp, idx.q_blk}, keys{idx.mask, idx.k_seq, idx.k_grp, idx.k_blk};
  // A tile of runs takes about a microsecond (up to 4096 rule calls where no two tokens are
  // alike); a few tiles are not worth a region's start.
  const bool worth_threads = masked.size() >= 64;
  parallel_for<Schedule::dynamic>(static_cast<int64_t>(masked.size()), worth_threads, [&](int64_t t) {
    decide_tile(idx, queries, keys, tiles.q(masked[t].first), tiles.k(masked[t].second),
                bits_.data() + t * kAttnTileQ);
  });
}

}  // namespace emb::cpu
