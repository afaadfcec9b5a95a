#include "parallel/shard_layout.hpp"

#include <algorithm>
#include <cstring>

#include "comm/shard_range.hpp"
#include "core/error.hpp"

namespace emb {

ShardLayout::ShardLayout(const ParamRegistry& reg, ShardMode mode, int rank, int size, int64_t bucket_bytes)
    : mode_(mode), flat_total_(reg.total()) {
  const int64_t bucket_elems = bucket_bytes / int64_t(sizeof(float));
  for (int u = 0; u < reg.n_units(); ++u) {
    const UnitRange& unit = reg.unit(u);
    unit_offsets_.push_back(unit.offset);
    const bool extend = !buckets_.empty() && buckets_.back().count + unit.count <= bucket_elems;
    if (extend) {
      buckets_.back().last_unit = u;
      buckets_.back().count += unit.count;
    } else {
      Bucket b;
      b.first_unit = b.last_unit = u;
      b.offset = unit.offset;
      b.count = unit.count;
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
  // Intersect every tensor with the owned pieces so AdamW knows which elements decay.
  for (const ParamInfo& t : reg.all()) {
    const Bucket& b = buckets_[size_t(bucket_of_unit_[size_t(t.unit)])];
    int64_t lo = std::max(t.offset, b.offset + b.begin);
    int64_t hi = std::min(t.offset + t.numel, b.offset + b.begin + b.owned_count);
    if (hi <= lo) continue;
    float mult = t.decay ? 1.0f : 0.0f;
    int64_t owned = b.owned_offset + (lo - b.offset - b.begin);
    if (!segments_.empty() && segments_.back().decay_mult == mult &&
        segments_.back().owned_offset + segments_.back().count == owned)
      segments_.back().count += hi - lo;
    else
      segments_.push_back({owned, hi - lo, mult});
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
