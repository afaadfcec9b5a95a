#include "parallel/shard_layout.hpp"

#include <algorithm>
#include <cstring>

#include "comm/shard_range.hpp"
#include "core/error.hpp"

namespace emb {

namespace {

// Appends [owned, owned + count) with moments at `state` to runs, merged with the last run
// when adjacent and alike (adjacent owned elements have adjacent moments: no frozen gap).
void append_run(std::vector<DecaySegment>& runs, int64_t owned, int64_t count, float mult, int64_t state) {
  if (!runs.empty() && runs.back().decay_mult == mult && runs.back().owned_offset + runs.back().count == owned)
    runs.back().count += count;
  else
    runs.push_back({owned, count, mult, state});
}

// Per unit of reg: every tensor of it is frozen.
std::vector<bool> frozen_units(const ParamRegistry& reg, const std::vector<bool>& frozen) {
  std::vector<bool> units(size_t(reg.n_units()), !frozen.empty());
  for (size_t i = 0; i < frozen.size(); ++i)
    if (!frozen[i]) units[size_t(reg.all()[i].unit)] = false;
  return units;
}

}  // namespace

ShardLayout::ShardLayout(const ParamRegistry& reg, ShardMode mode, int rank, int size, int64_t bucket_bytes,
                         const std::vector<bool>& frozen)
    : mode_(mode), flat_total_(reg.total()), frozen_(frozen) {
  EMB_ASSERT(frozen.empty() || frozen.size() == reg.all().size());
  const int64_t bucket_elems = bucket_bytes / int64_t(sizeof(float));
  const std::vector<bool> unit_frozen = frozen_units(reg, frozen);
  for (int u = 0; u < reg.n_units(); ++u) {
    const UnitRange& unit = reg.unit(u);
    unit_offsets_.push_back(unit.offset);
    const bool extend = !buckets_.empty() && buckets_.back().count + unit.count <= bucket_elems &&
                        buckets_.back().frozen == unit_frozen[size_t(u)];
    if (extend) {
      buckets_.back().last_unit = u;
      buckets_.back().count += unit.count;
    } else {
      Bucket b;
      b.first_unit = b.last_unit = u;
      b.offset = unit.offset;
      b.count = unit.count;
      b.frozen = unit_frozen[size_t(u)];
      buckets_.push_back(b);
    }
    bucket_of_unit_.push_back(int(buckets_.size()) - 1);
  }
  // Each bucket cut wherever its tensors turn from trained to frozen or back (tensors are in flat order).
  const std::vector<ParamInfo>& tensors = reg.all();
  auto frozen_tensor = [&](size_t i) { return !frozen.empty() && frozen[i]; };
  size_t t = 0;
  for (Bucket& b : buckets_) {
    b.first_piece = int(pieces_.size());
    b.owned_offset = owned_total_;
    int64_t start = b.offset;
    bool piece_frozen = b.frozen;
    for (; t < tensors.size() && tensors[t].offset < b.offset + b.count; ++t) {
      if (tensors[t].numel == 0) continue;
      if (frozen_tensor(t) != piece_frozen && tensors[t].offset > start) {
        add_piece(start, tensors[t].offset - start, piece_frozen, rank, size);
        start = tensors[t].offset;
      }
      piece_frozen = frozen_tensor(t);
    }
    add_piece(start, b.offset + b.count - start, piece_frozen, rank, size);
    b.last_piece = int(pieces_.size()) - 1;
    b.owned_count = owned_total_ - b.owned_offset;
  }
  // Intersect every trainable tensor with the owned pieces so AdamW knows which elements decay.
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ParamInfo& x = tensors[i];
    if (frozen_tensor(i)) continue;
    const Piece& k = piece_of(x);
    int64_t lo = std::max(x.offset, k.offset + k.begin);
    int64_t hi = std::min(x.offset + x.numel, k.offset + k.begin + k.owned_count);
    if (hi <= lo) continue;
    const int64_t owned = k.owned_offset + (lo - k.offset - k.begin);
    append_run(segments_, owned, hi - lo, x.decay ? 1.0f : 0.0f, trainable_owned_total_);
    append_run(trainable_runs_, owned, hi - lo, 1.0f, trainable_owned_total_);
    trainable_owned_total_ += hi - lo;
  }
}

void ShardLayout::add_piece(int64_t offset, int64_t count, bool frozen, int rank, int size) {
  const ShardRange owned = mode_ == ShardMode::none ? ShardRange{0, count} : shard_range(count, rank, size);
  pieces_.push_back({offset, count, owned.offset, owned.count, owned_total_, frozen});
  owned_total_ += owned.count;
}

const Piece& ShardLayout::piece_of(const ParamInfo& t) const {
  const Bucket& b = bucket(bucket_of_unit(t.unit));
  int p = b.first_piece;
  while (p < b.last_piece && piece(p).offset + piece(p).count <= t.offset) ++p;
  return piece(p);
}

int64_t ShardLayout::max_bucket_count() const {
  int64_t m = 0;
  for (const Bucket& b : buckets_) m = std::max(m, b.count);
  return m;
}

void ShardLayout::gather_owned(const float* flat, float* owned) const {
  for (const Piece& p : pieces_)
    std::memcpy(owned + p.owned_offset, flat + p.offset + p.begin, size_t(p.owned_count) * sizeof(float));
}

}  // namespace emb
