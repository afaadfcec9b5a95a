#include "data/modality_sub_keys.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.hpp"
#include "data/packed_format.hpp"

namespace emb {

std::vector<ModalitySubKey> modality_sub_keys(const H5File& f, const char* part) {
  const std::string field = str("/steps/", part);
  const int64_t width = f.dims(field).at(1);
  const std::vector<ModalitySubKey> whole = {{part, 0, width, true, true, ""}};
  if (!f.has_attr("/", packed::kModality)) return whole;
  const auto fail = [&](const std::string& why) { throw Error(f.where("/", "modality attribute: " + why), kExitInput); };
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(f.attr_string("/", packed::kModality));
  } catch (const nlohmann::json::exception& e) {
    fail(str("not JSON (", e.what(), ")"));
  }
  if (!m.contains(part) || m[part].empty()) return whole;
  std::vector<ModalitySubKey> keys;
  try {
    for (const auto& [name, slice] : m[part].items()) {
      const nlohmann::json& type = slice.value("rotation_type", nlohmann::json());
      keys.push_back({name, slice.at("start").get<int64_t>(), slice.at("end").get<int64_t>(),
                      slice.value("absolute", true), slice.value("continuous", true),
                      type.is_null() ? "" : type.get<std::string>()});
    }
  } catch (const nlohmann::json::exception& e) {
    fail(str("its ", part, " sub-keys are malformed (", e.what(), ")"));
  }
  std::sort(keys.begin(), keys.end(), [](const ModalitySubKey& a, const ModalitySubKey& b) { return a.start < b.start; });
  int64_t at = 0;
  for (const ModalitySubKey& k : keys) {
    if (k.start != at || k.end <= k.start)
      fail(str("its ", part, " sub-keys do not tile the ", part, "'s columns (a sub-key at [", k.start, ", ", k.end,
               ") after column ", at, ")"));
    at = k.end;
  }
  if (at != width) fail(str("its ", part, " sub-keys cover ", at, " columns, ", field, " has ", width));
  return keys;
}

std::string sub_key_names(const std::vector<ModalitySubKey>& keys) {
  std::string names;
  for (const ModalitySubKey& k : keys) names += (names.empty() ? "" : ", ") + k.name;
  return names;
}

}  // namespace emb
