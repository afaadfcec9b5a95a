#include "app/gr00t_metadata.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "data/gr00t_embodiment_tags.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"

namespace emb {
namespace {

using json = nlohmann::json;

// One statistic vector per name (packed::kStatNames) of one field, and the rows behind it.
struct FieldStats {
  std::map<std::string, std::vector<double>> values;
  double rows = 0;
};

// The statistics of one packed file's state and action, its row count and its modalities.
struct FileStats {
  std::string tag;
  FieldStats state, action;
  json modality;  // the `modality` attribute, or null
};

FieldStats read_field(const H5File& f, const char* field, double rows) {
  FieldStats s;
  s.rows = rows;
  for (const char* name : packed::kStatNames) {
    const std::string ds = str("/stats/", field, "/", name);
    if (!f.has(ds))
      f.fail(ds, "missing: GR00T's metadata.json needs the data's statistics (embpack writes them; "
                 "re-pack the data with this embpack)");
    const std::vector<float> v = f.read_all<float>(ds);
    s.values[name] = std::vector<double>(v.begin(), v.end());
  }
  return s;
}

FileStats read_file_stats(const std::string& path) {
  const H5File f = H5File::open(path);
  FileStats s;
  const std::vector<int32_t> ids = f.read_all<int32_t>(packed::kEpisodeEmbodiment);
  const std::set<int32_t> distinct(ids.begin(), ids.end());
  if (distinct.size() != 1)
    f.fail(packed::kEpisodeEmbodiment, str(distinct.size(), " embodiments in one file: GR00T's metadata.json holds "
                                           "statistics per embodiment tag, so each packed file must hold one"));
  const int id = *distinct.begin();
  s.tag = gr00t_embodiment_tag(id);
  if (s.tag.empty())
    f.fail(packed::kEpisodeEmbodiment,
           str("embodiment id ", id, " has no upstream tag (", gr00t_embodiment_tags_text(),
               ": the projector slot upstream inference uses); pack the data with embpack lerobot "
               "--embodiment-tag new_embodiment"));
  const double rows = double(f.dims(packed::kState)[0]);
  s.state = read_field(f, "state", rows);
  s.action = read_field(f, "action", rows);
  if (f.has_attr("/", packed::kModality)) s.modality = json::parse(f.attr_string("/", packed::kModality));
  return s;
}

// Several files' statistics as one: upstream's mixture of datasets (see the header).
FieldStats combine(const std::vector<const FieldStats*>& parts) {
  FieldStats out = *parts.front();
  if (parts.size() == 1) return out;
  const size_t n = out.values["mean"].size();
  double rows = 0;
  for (const FieldStats* p : parts) rows += p->rows;
  for (size_t i = 0; i < n; ++i) {
    double mean = 0, second = 0, q01 = 0, q99 = 0, lo = INFINITY, hi = -INFINITY;
    for (const FieldStats* p : parts) {
      const auto& v = p->values;
      const double w = p->rows / rows, m = v.at("mean")[i], sd = v.at("std")[i];
      mean += w * m, second += w * (sd * sd + m * m), q01 += w * v.at("q01")[i], q99 += w * v.at("q99")[i];
      lo = std::min(lo, v.at("min")[i]), hi = std::max(hi, v.at("max")[i]);
    }
    out.values["mean"][i] = mean, out.values["std"][i] = std::sqrt(std::max(0.0, second - mean * mean));
    out.values["q01"][i] = q01, out.values["q99"][i] = q99, out.values["min"][i] = lo, out.values["max"][i] = hi;
  }
  out.rows = rows;
  return out;
}

// The sub-keys of one modality part ("state" / "action") with their [start, end) in the
// packed vector: the `modality` attribute's, or one spanning the whole vector.
json sub_keys(const json& modality, const char* part, size_t width) {
  if (!modality.is_null() && modality.contains(part)) return modality[part];
  json whole = json::object();
  whole["start"] = 0, whole["end"] = width, whole["absolute"] = true, whole["rotation_type"] = nullptr;
  whole["continuous"] = true;
  json keys = json::object();
  keys[part] = whole;
  return keys;
}

json tag_metadata(const std::string& tag, const std::vector<const FileStats*>& files) {
  std::vector<const FieldStats*> states, actions;
  for (const FileStats* f : files) states.push_back(&f->state), actions.push_back(&f->action);
  const std::map<std::string, FieldStats> fields = {{"state", combine(states)}, {"action", combine(actions)}};
  const json& modality = files.front()->modality;
  json statistics, modalities;
  for (const auto& [part, stats] : fields) {
    statistics[part] = json::object();
    modalities[part] = json::object();
    const json keys = sub_keys(modality, part.c_str(), stats.values.at("mean").size());
    for (const auto& [key, slice] : keys.items()) {
      const size_t start = slice.at("start").get<size_t>(), end = slice.at("end").get<size_t>();
      json values;
      for (const auto& [name, v] : stats.values) values[name] = std::vector<double>(v.begin() + long(start), v.begin() + long(end));
      statistics[part][key] = values;
      modalities[part][key] = {{"absolute", slice.value("absolute", true)},
                               {"rotation_type", slice.value("rotation_type", json())},
                               {"shape", {end - start}},
                               {"continuous", slice.value("continuous", true)}};
    }
  }
  modalities["video"] = !modality.is_null() && modality.contains("video") ? modality["video"] : json::object();
  return {{"statistics", statistics}, {"modalities", modalities}, {"embodiment_tag", tag}};
}

}  // namespace

json gr00t_metadata(const RunConfig& cfg) {
  if (cfg.data.paths.empty())
    throw Error(str(cfg.deck_path, ": data.paths is empty; GR00T's metadata.json holds the training data's "
                                   "statistics"),
                kExitInput);
  std::vector<FileStats> files;
  try {
    for (const std::string& path : cfg.data.paths) files.push_back(read_file_stats(path));
  } catch (const Error& e) {
    throw Error(e.what(), kExitInput);
  }
  std::map<std::string, std::vector<const FileStats*>> by_tag;
  for (const FileStats& f : files) by_tag[f.tag].push_back(&f);
  json metadata = json::object();
  for (const auto& [tag, of_tag] : by_tag) metadata[tag] = tag_metadata(tag, of_tag);
  return metadata;
}

}  // namespace emb
