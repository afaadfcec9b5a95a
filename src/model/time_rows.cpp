#include "model/time_rows.hpp"

#include <cstring>
#include <unordered_map>

namespace emb {

void build_time_rows(const std::vector<float>& hi, const std::vector<float>& lo, TimeRows& rows) {
  std::unordered_map<uint64_t, int32_t> seen;  // by the pair's bit patterns: equal timesteps share a row
  rows.t.clear();
  rows.row.resize(hi.size());
  for (size_t i = 0; i < hi.size(); ++i) {
    const float pair[2] = {hi[i], lo.empty() ? 0.0f : lo[i]};
    uint64_t bits;
    std::memcpy(&bits, pair, sizeof bits);
    auto [it, inserted] = seen.try_emplace(bits, int32_t(rows.t.size() / 2));  // a node only for a new timestep
    if (inserted) rows.t.insert(rows.t.end(), pair, pair + 2);
    rows.row[i] = it->second;
  }
}

}  // namespace emb
