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
  for (Bucket& b : buckets_) {
    ShardRange owned = mode == ShardMode::none ? ShardRange{0, b.count} : shard_range(b.count, rank, size);
    b.begin = owned.offset;
    b.owned_count = owned.count;
    b.owned_offset = owned_total_;
    owned_total_ += owned.count;
  }
  // Intersect every trainable tensor with the owned pieces so AdamW knows which elements decay.
  for (size_t i = 0; i < reg.all().size(); ++i) {
    const ParamInfo& t = reg.all()[i];
    if (!frozen.empty() && frozen[i]) continue;
    const Bucket& b = buckets_[size_t(bucket_of_unit_[size_t(t.unit)])];
    int64_t lo = std::max(t.offset, b.offset + b.begin);
    int64_t hi = std::min(t.offset + t.numel, b.offset + b.begin + b.owned_count);
    if (hi <= lo) continue;
    const int64_t owned = b.owned_offset + (lo - b.offset - b.begin);
    append_run(segments_, owned, hi - lo, t.decay ? 1.0f : 0.0f, trainable_owned_total_);
    append_run(trainable_runs_, owned, hi - lo, 1.0f, trainable_owned_total_);
    trainable_owned_total_ += hi - lo;
  }
}

int64_t ShardLayout::max_bucket_count() const {
  int64_t m = 0;
  for (const Bucket& b : buckets_) m = std::max(m, b.count);
  return m;
}

void ShardLayout::gather_owned(const float* flat, float* owned) const {
  for (const Bucket& b : buckets_)
    std::memcpy(owned + b.owned_offset, flat + b.offset + b.begin, size_t(b.owned_count) * sizeof(float));
}

}  // namespace emb
