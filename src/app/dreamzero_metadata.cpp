#include "app/dreamzero_metadata.hpp"

#include <vector>

#include "config/value.hpp"
#include "core/error.hpp"

namespace emb {
namespace {

using json = nlohmann::json;

std::vector<std::string> keys_of(const json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

std::vector<std::string> sub_keys(const json& entry, const char* part) {
  if (!entry.contains("statistics") || !entry["statistics"].contains(part)) return {};
  return keys_of(entry["statistics"][part]);
}

// Inference reads the sub-keys its conf.yaml's modality configs name: keys the release has and
// the run's data lacks (or the other way round) are worth a line.
std::string differing_keys(const json& released, const json& run) {
  std::string note;
  for (const char* part : {"state", "action"}) {
    const std::vector<std::string> ours = sub_keys(run, part), theirs = sub_keys(released, part);
    if (ours == theirs) continue;
    auto text = [](const std::vector<std::string>& keys) { return keys.empty() ? std::string("none") : join(keys, " "); };
    note += str(note.empty() ? "" : "; ", part, " sub-keys ", text(ours), " where the release has ", text(theirs));
  }
  return note;
}

}  // namespace

DreamZeroMetadata dreamzero_metadata(const json& released, const json& run, const std::string& where) {
  if (run.size() != 1)
    throw Error(str("the run's data holds ", run.size(), " embodiment tags (", join(keys_of(run)),
                    "); DreamZero serves one embodiment, so its metadata.json takes one entry"),
                kExitInput);
  const std::string run_tag = run.begin().key();
  if (!released.is_object() || released.empty())
    throw Error(str(where, ": no embodiment entries; DreamZero's release holds its embodiment's"), kExitInput);
  DreamZeroMetadata m;
  if (released.contains(run_tag)) {
    m.tag = run_tag;
  } else if (released.size() == 1) {
    m.tag = released.begin().key();
  } else {
    throw Error(str(where, ": entries ", join(keys_of(released)), " and none is the run's data's tag ", run_tag,
                    "; DreamZero serves one embodiment: keep the release's entry of it alone in ", where),
                kExitInput);
  }
  json entry = run.begin().value();
  entry["embodiment_tag"] = m.tag;
  m.note = differing_keys(released[m.tag], entry);
  m.json = released;
  m.json[m.tag] = entry;
  return m;
}

}  // namespace emb
