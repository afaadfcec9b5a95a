#include "model/time_rows.hpp"

#include <cstring>
#include <unordered_map>

namespace emb {

void build_time_rows(const std::vector<float>& temb_t, TimeRows& rows) {
  std::unordered_map<uint32_t, int32_t> seen;  // by bit pattern: equal floats share a row
  rows.t.clear();
  rows.row.resize(temb_t.size());
  for (size_t i = 0; i < temb_t.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &temb_t[i], sizeof bits);
    auto [it, inserted] = seen.emplace(bits, int32_t(rows.t.size()));
    if (inserted) rows.t.push_back(temb_t[i]);
    rows.row[i] = it->second;
  }
}

}  // namespace emb
