#include "train/shard_layout.hpp"

#include <algorithm>
#include <cstring>

#include "comm/shard_range.hpp"
#include "core/error.hpp"

namespace emb {

ShardMode shard_mode_from_name(const std::string& name) {
  if (name == "none") return ShardMode::none;
  if (name == "grads") return ShardMode::grads;
  if (name == "full") return ShardMode::full;
  throw Error(str("unknown train.shard '", name, "' (expected none, grads or full)"));
}

ShardLayout::ShardLayout(const ParamRegistry& reg, ShardMode mode, int rank, int size)
    : mode_(mode), flat_total_(reg.total()) {
  for (int u = 0; u < reg.n_units(); ++u) {
    const UnitRange& unit = reg.unit(u);
    OwnedPiece piece;
    piece.unit_offset = unit.offset;
    piece.unit_count = unit.count;
    ShardRange owned = mode == ShardMode::none ? ShardRange{0, unit.count} : shard_range(unit.count, rank, size);
    piece.begin = owned.offset;
    piece.count = owned.count;
    piece.owned_offset = owned_total_;
    owned_total_ += owned.count;
    pieces_.push_back(piece);
  }
  // Intersect every tensor with the owned pieces so AdamW knows which elements decay.
  for (const ParamInfo& t : reg.all()) {
    const OwnedPiece& p = pieces_[size_t(t.unit)];
    int64_t lo = std::max(t.offset, p.unit_offset + p.begin);
    int64_t hi = std::min(t.offset + t.numel, p.unit_offset + p.begin + p.count);
    if (hi <= lo) continue;
    float mult = t.decay ? 1.0f : 0.0f;
    int64_t owned = p.owned_offset + (lo - p.unit_offset - p.begin);
    if (!segments_.empty() && segments_.back().decay_mult == mult &&
        segments_.back().owned_offset + segments_.back().count == owned)
      segments_.back().count += hi - lo;
    else
      segments_.push_back({owned, hi - lo, mult});
  }
}

void ShardLayout::gather_owned(const float* flat, float* owned) const {
  for (const OwnedPiece& p : pieces_)
    std::memcpy(owned + p.owned_offset, flat + p.unit_offset + p.begin, size_t(p.count) * sizeof(float));
}

}  // namespace emb
