#include "data/relative_actions.hpp"

#include "config/value.hpp"
#include "core/error.hpp"
#include "data/packed_format.hpp"

namespace emb {

namespace {

using json = nlohmann::json;

std::string sub_key_names(const json& part) {
  std::string names;
  for (const auto& [name, slice] : part.items()) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none" : names;
}

int64_t slice_width(const json& slice) { return slice.at("end").get<int64_t>() - slice.at("start").get<int64_t>(); }

RelativeColumns paired_columns(const std::string& file, const json& modality, const std::string& key) {
  const auto fail = [&](const std::string& why) {
    throw Error(str(file, ": modality attribute: relative action key '", key, "': ", why), kExitInput);
  };
  const json& actions = modality.contains("action") ? modality["action"] : json::object();
  const json& states = modality.contains("state") ? modality["state"] : json::object();
  if (!actions.contains(key)) fail(str("no such action sub-key (the file's: ", sub_key_names(actions), ")"));
  if (!states.contains(key))
    fail(str("action.", key, " has no state partner state.", key, " (the file's state sub-keys: ", sub_key_names(states),
             ")"));
  const json &a = actions[key], &s = states[key];
  if (slice_width(a) != slice_width(s))
    fail(str("action.", key, " is ", slice_width(a), " columns wide, state.", key, " ", slice_width(s)));
  return {key, a.at("start").get<int64_t>(), s.at("start").get<int64_t>(), slice_width(a)};
}

void shift_by_state(const RelativeActions& r, const float* anchor_state, float* rows, int64_t n_rows, int64_t stride,
                    float sign) {
  for (int64_t i = 0; i < n_rows; ++i)
    for (const RelativeColumns& c : r)
      for (int64_t j = 0; j < c.width; ++j) rows[i * stride + c.action_start + j] += sign * anchor_state[c.state_start + j];
}

}  // namespace

RelativeActions relative_columns(const std::string& modality, const std::vector<std::string>& keys,
                                 const std::string& file) {
  if (modality.empty())
    throw Error(str(file, ": no modality attribute: data.relative_action_keys = ", joined_keys(keys),
                    " pairs action.K with state.K by it (embpack lerobot of a dataset with GR00T's meta/modality.json "
                    "writes it)"),
                kExitInput);
  json parsed;
  try {
    parsed = json::parse(modality);
  } catch (const json::exception& e) {
    throw Error(str(file, ": modality attribute is not JSON (", e.what(), ")"), kExitInput);
  }
  RelativeActions r;
  for (const std::string& key : keys) r.push_back(paired_columns(file, parsed, key));
  return r;
}

RelativeActions relative_columns(const H5File& f, const std::vector<std::string>& keys) {
  return relative_columns(f.has_attr("/", packed::kModality) ? f.attr_string("/", packed::kModality) : "", keys,
                          clipped_path(f.path()));
}

void check_relative_statistics(const H5File& f, const std::vector<std::string>& keys, int64_t chunk) {
  const char* group = packed::kActionRelativeStats;
  const bool present = f.has(group) && f.has_attr(group, packed::kRelativeKeys) && f.has_attr(group, packed::kRelativeChunk);
  const std::string have =
      present ? str("holds them for keys ", f.attr_string(group, packed::kRelativeKeys), " over ",
                    int64_t(f.attr_double(group, packed::kRelativeChunk)), "-step chunks")
              : std::string("missing");
  if (present && f.attr_string(group, packed::kRelativeKeys) == joined_keys(keys) &&
      int64_t(f.attr_double(group, packed::kRelativeChunk)) == chunk)
    return;
  throw Error(f.where(group, str(have, "; data.relative_action_keys = ", joined_keys(keys), " with model.actions_per_block = ",
                                 chunk, " needs them: rerun the embpack command that wrote this file (embpack features "
                                 "--dreamzero or embpack lerobot) with --relative-actions ",
                                 joined_keys(keys), " --relative-chunk ", chunk)),
              kExitInput);
}

void subtract_anchor_state(const RelativeActions& r, const float* anchor_state, float* rows, int64_t n_rows,
                           int64_t stride) {
  shift_by_state(r, anchor_state, rows, n_rows, stride, -1.f);
}

void add_anchor_state(const RelativeActions& r, const float* anchor_state, float* rows, int64_t n_rows,
                      int64_t stride) {
  shift_by_state(r, anchor_state, rows, n_rows, stride, 1.f);
}

void make_block_actions_relative(const RelativeActions& r, const TokenConfig& cfg, Sample& s) {
  EMB_CHECK(s.dreamzero, "relative actions: a sample outside the DreamZero layout");
  const int64_t block_rows = cfg.actions_per_block, blocks = int64_t(s.block_actions.size()) / (block_rows * cfg.action_dim);
  for (int64_t b = 0; b < blocks; ++b)
    subtract_anchor_state(r, &s.state[size_t(b * cfg.states_per_block * cfg.state_dim)],
                          &s.block_actions[size_t(b * block_rows * cfg.action_dim)], block_rows, cfg.action_dim);
}

json relative_actions_json(const RelativeActions& r) {
  json j = json::array();
  for (const RelativeColumns& c : r)
    j.push_back({{"key", c.key}, {"action_start", c.action_start}, {"state_start", c.state_start}, {"width", c.width}});
  return j;
}

RelativeActions relative_actions_from_json(const json& j, const std::string& where) {
  RelativeActions r;
  try {
    for (const json& c : j)
      r.push_back({c.at("key").get<std::string>(), c.at("action_start").get<int64_t>(),
                   c.at("state_start").get<int64_t>(), c.at("width").get<int64_t>()});
  } catch (const json::exception& e) {
    throw Error(str(where, ": malformed relative actions record (", e.what(), ")"));
  }
  return r;
}

std::string joined_keys(const std::vector<std::string>& keys) { return join(keys, ","); }

}  // namespace emb
