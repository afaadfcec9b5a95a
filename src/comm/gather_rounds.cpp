#include "comm/gather_rounds.hpp"

#include <algorithm>
#include <climits>

#include "core/error.hpp"

namespace emb {

GatherRounds::GatherRounds(const std::vector<int64_t>& counts, int64_t round_limit) : counts_(counts) {
  EMB_ASSERT(!counts.empty() && round_limit > 0 && round_limit <= INT_MAX);
  per_rank_ = std::max<int64_t>(1, round_limit / int64_t(counts.size()));
  int64_t longest = 0;
  for (int64_t c : counts) {
    EMB_ASSERT(c >= 0);
    offsets_.push_back(total_);
    total_ += c, longest = std::max(longest, c);
  }
  rounds_ = (longest + per_rank_ - 1) / per_rank_;
}

GatherRound GatherRounds::round(int64_t r) const {
  EMB_ASSERT(r >= 0 && r < rounds_);
  GatherRound out;
  int64_t staged = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    int64_t first = std::min(r * per_rank_, counts_[i]), n = std::min(per_rank_, counts_[i] - first);
    out.counts.push_back(int(n)), out.displs.push_back(int(staged));
    out.source.push_back(first), out.target.push_back(offsets_[i] + first);
    staged += n;
  }
  return out;
}

}  // namespace emb
