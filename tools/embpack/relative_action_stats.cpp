#include "relative_action_stats.hpp"

#include "column_stats.hpp"
#include "config/value.hpp"
#include "core/error.hpp"
#include "data/packed_format.hpp"
#include "data/relative_actions.hpp"

namespace emb {

namespace {

// Column j of sub-key c over every chunk of every episode, minus the chunk's first state.
std::vector<float> relative_column(const RelativeColumns& c, int64_t j, const PackedData& d,
                                   const std::vector<int64_t>& offsets, const std::vector<float>& state,
                                   const std::vector<float>& action) {
  std::vector<float> values;
  const int64_t chunk = d.relative_action_chunk;
  for (size_t e = 0; e + 1 < offsets.size(); ++e)
    for (int64_t i = offsets[e]; i + chunk <= offsets[e + 1]; ++i) {
      const float anchor = state[size_t(i * d.state_dim + c.state_start + j)];
      for (int64_t k = 0; k < chunk; ++k) values.push_back(action[size_t((i + k) * d.action_dim + c.action_start + j)] - anchor);
    }
  return values;
}

}  // namespace

void apply_relative_action_options(const RelativeActionOptions& o, PackedData& d) {
  if (o.keys.empty()) return;
  d.relative_action_keys = o.keys;
  d.relative_action_chunk = o.chunk;
}

void check_relative_action_request(const PackedData& d, const std::string& out) {
  if (d.relative_action_keys.empty()) return;
  if (d.relative_action_chunk < 1)
    throw Error(str(out, ": --relative-chunk ", d.relative_action_chunk, ": a chunk is at least 1 step"), kExitInput);
  relative_columns(d.modality, d.relative_action_keys, out);
}

void read_relative_action_request(const H5File& f, PackedData& p) {
  const char* group = packed::kActionRelativeStats;
  if (!f.has(group) || !f.has_attr(group, packed::kRelativeKeys)) return;
  p.relative_action_keys = split_list(f.attr_string(group, packed::kRelativeKeys));
  p.relative_action_chunk = int64_t(f.attr_double(group, packed::kRelativeChunk));
}

void write_relative_action_stats(H5File& f, const PackedData& d, const std::vector<float>& state,
                                 const std::vector<float>& action) {
  if (d.relative_action_keys.empty()) return;
  const char* group = packed::kActionRelativeStats;
  const RelativeActions columns = relative_columns(d.modality, d.relative_action_keys, f.path());
  const std::vector<int64_t> offsets = f.read_all<int64_t>(packed::kEpisodeOffsets);
  std::vector<std::vector<float>> values;  // per statistic name, the whole action vector
  for (const char* name : packed::kStatNames) values.push_back(f.read_all<float>(str("/stats/action/", name)));
  for (const RelativeColumns& c : columns)
    for (int64_t j = 0; j < c.width; ++j) {
      const std::vector<float> column = relative_column(c, j, d, offsets, state, action);
      if (column.empty())
        throw Error(f.where(group, str("no episode of ", d.relative_action_chunk, " steps (--relative-chunk): no "
                                       "relative chunk of ", c.key)),
                    kExitInput);
      const ColumnStats s = column_stats(column, 1);
      const float* stat[] = {s.mean.data(), s.std.data(), s.min.data(), s.max.data(), s.q01.data(), s.q99.data()};
      for (size_t n = 0; n < values.size(); ++n) values[n][size_t(c.action_start + j)] = *stat[n];
    }
  for (size_t n = 0; n < values.size(); ++n)
    f.write(str(group, "/", packed::kStatNames[n]), {d.action_dim}, values[n].data());
  f.set_attr(group, packed::kRelativeKeys, joined_keys(d.relative_action_keys));
  f.set_attr(group, packed::kRelativeChunk, double(d.relative_action_chunk));
}

}  // namespace emb
