// The tile grid of varlen attention: per-tile summaries of seq/blk/grp and the per-pair mask
// rule, from which a (query tile, key tile) pair is classified as skip (no allowed pair),
// dense (every pair allowed) or masked (decided per pair). Summaries are conservative: a tile
// pair is only skipped or dense when that is certain for every pair in it. The CPU attention
// (kernels/cpu/attention.hpp) computes on this grid, and the planner (src/plan) counts the
// pairs it computes with it.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/op_types.hpp"

namespace emb {

constexpr int kAttnTileQ = 64;
constexpr int kAttnTileK = 64;

enum class TileKind { skip, dense, masked };

// What the mask can depend on inside one tile, over its non-padding tokens, per group: grp 0,
// grp 1 and grp ≥ 2 (DreamZero's states; block_causal and prefix treat groups 1 and 2 alike).
struct TileSummary {
  int64_t begin = 0, end = 0;
  bool has_padding = false;
  int64_t n_real = 0;
  int32_t seq_min = 0, seq_max = 0;
  int64_t n_grp[3] = {0, 0, 0};
  int32_t blk_min[3] = {0, 0, 0}, blk_max[3] = {0, 0, 0};
};

class AttnTiles {
 public:
  AttnTiles(const AttnIndex& idx, int64_t Tq, int64_t Tk);
  int64_t n_q() const { return static_cast<int64_t>(q_.size()); }
  int64_t n_k() const { return static_cast<int64_t>(k_.size()); }
  const TileSummary& q(int64_t t) const { return q_[t]; }
  const TileSummary& k(int64_t t) const { return k_[t]; }
  TileKind kind(int64_t qt, int64_t kt) const;
  // The query-key pairs of every tile pair of `kind` (each computed whole when not skipped).
  int64_t pairs(TileKind of_kind) const;

 private:
  AttnMask mask_;
  TeacherForcing tf_;
  std::vector<TileSummary> q_, k_;
};

}  // namespace emb
