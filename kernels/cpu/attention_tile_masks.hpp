// The allowed pairs of a tile grid's masked tile pairs, decided once per attention call, per run
// of tokens the rule sees alike.
// The mask rule (attn_pair_allowed) depends on the tokens, never on the head, so the forward and
// the backward read these bits for every head instead of evaluating the rule per (pair, head):
// on packed short samples nearly every computed tile is masked, and the rule per head took
// 1.6-2.8 ms of a ~18 ms tiny_gr00t step (regression/plan_validation.md, rounds 17 and 18).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/attention_tiles.hpp"

namespace emb::cpu {

static_assert(kAttnTileK <= 64, "a tile row's allowed keys are one 64-bit word");

// Row r of masked tile pair (qt, kt) is one word: bit c set iff query q(qt).begin + r may attend
// key k(kt).begin + c. kAttnTileQ words (512 bytes) per masked tile pair; the bits past a short
// edge tile's rows and columns are clear.
class AttnTileMasks {
 public:
  AttnTileMasks(const AttnTiles& tiles, const AttnIndex& idx);
  // The kAttnTileQ row words of (qt, kt), which must be a masked tile pair.
  const uint64_t* rows(int64_t qt, int64_t kt) const {
    return bits_.data() + int64_t{slot_[qt * n_k_ + kt]} * kAttnTileQ;
  }

 private:
  int64_t n_k_;
  std::vector<int32_t> slot_;   // per tile pair (qt, kt): its masked tile's number, -1 if not masked
  std::vector<uint64_t> bits_;  // kAttnTileQ words per masked tile pair
};

}  // namespace emb::cpu
