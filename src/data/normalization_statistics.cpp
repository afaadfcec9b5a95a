#include "data/normalization_statistics.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "data/packed_format.hpp"
#include "data/state_sin_cos.hpp"

namespace emb {

FieldStatistics read_field_statistics(const H5File& f, const char* field, const char* group) {
  const std::string rows_of = str("/steps/", field);
  const std::vector<int64_t> dims = f.dims(rows_of);
  FieldStatistics s;
  s.rows = double(dims[0]);
  for (const char* name : packed::kStatNames) {
    const std::string ds = str("/stats/", group ? group : field, "/", name);
    if (!f.has(ds))
      throw Error(f.where(ds, "missing: data.normalize = upstream and the export's metadata.json need the file's "
                              "statistics; re-pack it with this embpack"),
                  kExitInput);
    const std::vector<float> v = f.read_all<float>(ds);
    if (int64_t(v.size()) != dims[1])
      throw Error(f.where(ds, str(v.size(), " values, expected ", dims[1], " (the width of ", rows_of,
                                  "); re-pack the file with this embpack")),
                  kExitInput);
    s.values[name] = std::vector<double>(v.begin(), v.end());
  }
  return s;
}

FieldStatistics combine_statistics(const std::vector<const FieldStatistics*>& parts) {
  FieldStatistics out = *parts.front();
  if (parts.size() == 1) return out;
  double rows = 0;
  for (const FieldStatistics* p : parts) rows += p->rows;
  for (size_t i = 0; i < out.width(); ++i) {
    double mean = 0, second = 0, q01 = 0, q99 = 0, lo = INFINITY, hi = -INFINITY;
    for (const FieldStatistics* p : parts) {
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

namespace {

// The files of every embodiment id, with each file's statistics (read once per file).
struct FileFields {
  const H5File* file;
  FieldStatistics state, action;
  RelativeActions relative_action;
  KeyTransformPlan key_transforms;
};

FileFields file_fields(const H5File& f, const RelativeActionChoice& relative, const KeyTransformChoice& key_transforms) {
  FileFields fields{&f, read_field_statistics(f, "state"), {}, {}, {}};
  if (relative.keys.empty()) {
    fields.action = read_field_statistics(f, "action");
  } else {
    fields.relative_action = relative_columns(f, relative.keys);
    check_relative_statistics(f, relative.keys, relative.chunk);
    fields.action = read_field_statistics(f, "action", "action_relative");
  }
  fields.key_transforms = key_transform_plan(f, key_transforms);
  return fields;
}

void check_same_width(const std::vector<const FileFields*>& of_id, int32_t id) {
  const FileFields& first = *of_id.front();
  for (const FileFields* f : of_id) {
    if (f->state.width() != first.state.width() || f->action.width() != first.action.width())
      throw Error(str(clipped_path(f->file->path()), ": embodiment ", id, " has state/action widths ", f->state.width(),
                      "/", f->action.width(), " here but ", first.state.width(), "/", first.action.width(), " in ",
                      clipped_path(first.file->path())),
                  kExitInput);
    if (!(f->relative_action == first.relative_action))
      throw Error(str(clipped_path(f->file->path()), ": embodiment ", id, ": its modality attribute places the relative "
                      "sub-keys in other columns than ", clipped_path(first.file->path()), "'s"),
                  kExitInput);
    if (!(f->key_transforms == first.key_transforms))
      throw Error(str(clipped_path(f->file->path()), ": embodiment ", id, ": its modality attribute gives ",
                      first.key_transforms.selected_by, " other sub-keys or columns than ",
                      clipped_path(first.file->path()), "'s (each sub-key is transformed apart)"),
                  kExitInput);
  }
}

}  // namespace

NormalizationStatistics normalization_statistics(const std::vector<const H5File*>& files,
                                                 const RelativeActionChoice& relative,
                                                 const KeyTransformChoice& key_transforms) {
  std::vector<FileFields> fields;
  std::map<int32_t, std::vector<const FileFields*>> by_id;
  fields.reserve(files.size());
  for (const H5File* f : files) fields.push_back(file_fields(*f, relative, key_transforms));
  for (size_t i = 0; i < files.size(); ++i) {
    std::vector<int32_t> ids = files[i]->read_all<int32_t>(packed::kEpisodeEmbodiment);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (int32_t id : ids) by_id[id].push_back(&fields[i]);
  }
  NormalizationStatistics stats;
  for (const auto& [id, of_id] : by_id) {
    check_same_width(of_id, id);
    std::vector<const FieldStatistics*> states, actions;
    for (const FileFields* f : of_id) states.push_back(&f->state), actions.push_back(&f->action);
    stats[id] = EmbodimentStatistics{combine_statistics(states), combine_statistics(actions),
                                     of_id.front()->relative_action, of_id.front()->key_transforms};
  }
  return stats;
}

namespace {

nlohmann::json field_json(const FieldStatistics& s) {
  nlohmann::json j = {{"rows", s.rows}};
  for (const auto& [name, v] : s.values) j[name] = v;
  return j;
}

FieldStatistics field_from_json(const nlohmann::json& j, const std::string& where) {
  FieldStatistics s;
  s.rows = j.at("rows").get<double>();
  for (const char* name : packed::kStatNames) {
    s.values[name] = j.at(name).get<std::vector<double>>();
    if (s.values[name].size() != s.width()) throw Error(str(where, ": statistic ", name, " has another width"));
  }
  return s;
}

// The per-key transforms an embodiment's record holds; a record of before them holds a sin/cos
// state encoding as "state_sin_cos": its sub-keys' widths in column order.
KeyTransformPlan recorded_key_transforms(const nlohmann::json& e, const std::string& where) {
  if (e.contains("key_transforms")) return key_transform_plan_from_json(e["key_transforms"], where);
  if (!e.contains("state_sin_cos")) return {};
  std::vector<ModalitySubKey> keys;
  for (int64_t width : e["state_sin_cos"].get<std::vector<int64_t>>()) {
    const int64_t start = keys.empty() ? 0 : keys.back().end;
    keys.push_back({str("state[", start, ":", start + width, "]"), start, start + width, true, true, ""});
  }
  return state_sin_cos_plan(keys);
}

}  // namespace

nlohmann::json statistics_json(const NormalizationStatistics& stats) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [id, e] : stats) {
    nlohmann::json& of_id = j[std::to_string(id)] = {{"state", field_json(e.state)}, {"action", field_json(e.action)}};
    if (!e.relative_action.empty()) of_id["relative_action"] = relative_actions_json(e.relative_action);
    if (!e.key_transforms.empty()) of_id["key_transforms"] = key_transform_plan_json(e.key_transforms);
  }
  return j;
}

NormalizationStatistics statistics_from_json(const nlohmann::json& j, const std::string& where) {
  NormalizationStatistics stats;
  try {
    for (const auto& [id, e] : j.items())
      stats[int32_t(std::stoi(id))] = EmbodimentStatistics{
          field_from_json(e.at("state"), where), field_from_json(e.at("action"), where),
          e.contains("relative_action") ? relative_actions_from_json(e["relative_action"], where) : RelativeActions{},
          recorded_key_transforms(e, where)};
  } catch (const nlohmann::json::exception& e) {
    throw Error(str(where, ": malformed normalisation statistics (", e.what(), ")"));
  }
  return stats;
}

}  // namespace emb
