#include "app/gr00t_metadata.hpp"

#include <map>
#include <set>

#include "core/error.hpp"
#include "data/gr00t_embodiment_tags.hpp"
#include "data/h5_file.hpp"
#include "data/normalization_statistics.hpp"
#include "data/packed_format.hpp"
#include "data/upstream_data_config.hpp"

namespace emb {
namespace {

using json = nlohmann::json;

// One packed file as metadata.json sees it: its embodiment's upstream tag and modalities.
struct FileEmbodiment {
  int32_t id = 0;
  std::string tag;
  json modality;  // the `modality` attribute, or null
};

FileEmbodiment read_file_embodiment(const H5File& f, bool upstream_tags) {
  FileEmbodiment s;
  const std::vector<int32_t> ids = f.read_all<int32_t>(packed::kEpisodeEmbodiment);
  const std::set<int32_t> distinct(ids.begin(), ids.end());
  if (distinct.size() != 1)
    f.fail(packed::kEpisodeEmbodiment, str(distinct.size(), " embodiments in one file: an export's metadata.json holds "
                                           "statistics per embodiment tag, so each packed file must hold one"));
  s.id = *distinct.begin();
  s.tag = gr00t_embodiment_tag(s.id);
  if (s.tag.empty() && !upstream_tags) s.tag = str("embodiment_", s.id);
  if (s.tag.empty())
    f.fail(packed::kEpisodeEmbodiment,
           str("embodiment id ", s.id, " has no upstream tag (", gr00t_embodiment_tags_text(),
               ": the projector slot upstream inference uses); pack the data with embpack lerobot "
               "--embodiment-tag new_embodiment"));
  if (f.has_attr("/", packed::kModality)) s.modality = json::parse(f.attr_string("/", packed::kModality));
  return s;
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

json tag_metadata(const FileEmbodiment& file, const EmbodimentStatistics& stats_of_id) {
  const std::map<std::string, const FieldStatistics*> fields = {{"state", &stats_of_id.state},
                                                                {"action", &stats_of_id.action}};
  const json& modality = file.modality;
  json statistics, modalities;
  for (const auto& [part, stats] : fields) {
    statistics[part] = json::object();
    modalities[part] = json::object();
    const json keys = sub_keys(modality, part.c_str(), stats->width());
    for (const auto& [key, slice] : keys.items()) {
      const size_t start = slice.at("start").get<size_t>(), end = slice.at("end").get<size_t>();
      json values;
      for (const auto& [name, v] : stats->values) values[name] = std::vector<double>(v.begin() + long(start), v.begin() + long(end));
      statistics[part][key] = values;
      modalities[part][key] = {{"absolute", slice.value("absolute", true)},
                               {"rotation_type", slice.value("rotation_type", json())},
                               {"shape", {end - start}},
                               {"continuous", slice.value("continuous", true)}};
    }
  }
  modalities["video"] = !modality.is_null() && modality.contains("video") ? modality["video"] : json::object();
  return {{"statistics", statistics}, {"modalities", modalities}, {"embodiment_tag", file.tag}};
}

// Upstream inference converts and normalises each key by the rotation_type, absolute and
// continuous flags metadata.json gives it (state_action.py:386-471), which come from the files'
// modality attributes: the data config the run recorded, resolved against them again, must give
// the per-key transforms it trained with. (data.state_encoding = sin_cos records no config: its
// sin/cos reads no flag of metadata.json.)
void check_trained_key_transforms(const H5File& f, const FileEmbodiment& file, const EmbodimentStatistics& trained) {
  const KeyTransformPlan& plan = trained.key_transforms;
  if (plan.upstream_config.empty()) return;
  const KeyTransformPlan now = key_transform_plan(f, {false, plan.upstream_config});
  if (now.state != plan.state || now.action != plan.action)
    throw Error(str(clipped_path(f.path()), ": embodiment ", file.id, " (", file.tag, ") trained with ", plan.selected_by,
                    " on other sub-keys, columns or rotation types than this file's modality attribute gives; "
                    "metadata.json must describe the data it trained on: export with its deck and data"),
                kExitInput);
}

}  // namespace

json metadata_entries(const RunConfig& cfg, const std::string& recorded, bool upstream_tags) {
  if (cfg.data.paths.empty())
    throw Error(str(cfg.deck_path, ": data.paths is empty; an export's metadata.json holds the training data's "
                                   "statistics"),
                kExitInput);
  std::vector<H5File> opened;
  std::vector<FileEmbodiment> embodiments;       // of each opened file
  std::map<std::string, FileEmbodiment> by_tag;  // the first file of each tag gives its modalities
  NormalizationStatistics stats;
  try {
    for (const std::string& path : cfg.data.paths) opened.push_back(H5File::open(path));
    std::vector<const H5File*> files;
    for (const H5File& f : opened) {
      embodiments.push_back(read_file_embodiment(f, upstream_tags));
      by_tag.emplace(embodiments.back().tag, embodiments.back());
      files.push_back(&f);
    }
    stats = recorded.empty() ? normalization_statistics(files)
                             : statistics_from_json(json::parse(recorded), "the checkpoint's normalization");
  } catch (const Error& e) {
    throw Error(e.what(), kExitInput);
  }
  for (size_t i = 0; i < opened.size(); ++i)
    if (stats.count(embodiments[i].id)) check_trained_key_transforms(opened[i], embodiments[i], stats.at(embodiments[i].id));
  json metadata = json::object();
  for (const auto& [tag, file] : by_tag) {
    if (!stats.count(file.id))
      throw Error(str("the checkpoint's normalization has no statistics of embodiment ", file.id, " (", tag, ")"),
                  kExitInput);
    metadata[tag] = tag_metadata(file, stats.at(file.id));
  }
  return metadata;
}

json gr00t_metadata(const RunConfig& cfg, const std::string& recorded) { return metadata_entries(cfg, recorded, true); }

}  // namespace emb
