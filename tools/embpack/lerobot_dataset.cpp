#include "lerobot_dataset.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "data/rotation_conversion.hpp"
#include "parquet/parquet_file.hpp"

namespace emb {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

Json read_json(const std::string& path) {
  std::ifstream in(path);
  EMB_CHECK(in, path, ": missing (a LeRobot dataset needs it)");
  Json j = Json::parse(in, nullptr, false);
  EMB_CHECK(!j.is_discarded() && j.is_object(), path, ": not a JSON object");
  return j;
}

// One JSON object per non-empty line.
std::vector<Json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  EMB_CHECK(in, path, ": missing (a LeRobot v2.1 dataset needs it)");
  std::vector<Json> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json j = Json::parse(line, nullptr, false);
    EMB_CHECK(!j.is_discarded() && j.is_object(), path, ":", n, ": not a JSON object");
    rows.push_back(std::move(j));
  }
  return rows;
}

template <class T>
T field(const Json& j, const std::string& key, const std::string& where) {
  EMB_CHECK(j.contains(key), where, ": missing \"", key, "\"");
  try {
    return j.at(key).get<T>();
  } catch (const std::exception&) {
    throw Error(str(where, ": \"", key, "\" has the wrong type (", j.at(key).type_name(), ")"));
  }
}

// Expands info.json's path templates: "{episode_index:06d}", "{video_key}".
std::string format_path(const std::string& pattern, const std::map<std::string, std::string>& values,
                        const std::string& where) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') {
      out += pattern[i];
      continue;
    }
    size_t close = pattern.find('}', i);
    EMB_CHECK(close != std::string::npos, where, ": unterminated '{' in path template ", pattern);
    std::string spec = pattern.substr(i + 1, close - i - 1), name = spec.substr(0, spec.find(':'));
    auto it = values.find(name);
    EMB_CHECK(it != values.end(), where, ": unknown field {", name, "} in path template ", pattern);
    std::string v = it->second;
    if (size_t colon = spec.find(':'); colon != std::string::npos) {
      size_t width = size_t(std::stoi(spec.substr(colon + 1)));  // "06d": zero-padded
      if (v.size() < width) v = std::string(width - v.size(), '0') + v;
    }
    out += v;
    i = close;
  }
  return out;
}

RecordedStats stats_of(const Json& j, const std::string& where) {
  RecordedStats s;
  auto flat = [&](const char* key) {  // per-channel image stats ([[[...]]]) are not compared: left empty
    std::vector<double> v;
    if (!j.contains(key)) return v;
    for (const Json& x : j.at(key)) {
      if (x.is_array()) return std::vector<double>();
      v.push_back(x.get<double>());
    }
    return v;
  };
  try {
    s.mean = flat("mean"), s.min = flat("min"), s.max = flat("max");
  } catch (const nlohmann::json::exception&) {
    throw Error(str(where, ": statistics are not lists of numbers"));
  }
  return s;
}

int64_t feature_width(const Json& info, const std::string& column, const std::string& where) {
  const Json& features = info.at("features");
  EMB_CHECK(features.contains(column), where, ": no feature \"", column, "\"");
  std::vector<int64_t> shape = field<std::vector<int64_t>>(features.at(column), "shape", where + ": " + column);
  EMB_CHECK(shape.size() == 1, where, ": feature ", column, " has shape of rank ", shape.size(), ", expected [n]");
  return shape[0];
}

// A video feature's height, width and channels: its shape, in the order its "names" give
// (["height", "width", "channel"] when absent), as Isaac-GR00T reads them.
void read_video_shape(const Json& feature, const std::string& where, LerobotCamera& c) {
  std::vector<int64_t> shape = field<std::vector<int64_t>>(feature, "shape", where);
  std::vector<std::string> names{"height", "width", "channel"};
  if (feature.contains("names") && feature.at("names").is_array())
    names = field<std::vector<std::string>>(feature, "names", where);
  EMB_CHECK(shape.size() == 3 && names.size() == 3, where, ": shape ", shape.size(), " values and ", names.size(),
            " names, expected [height, width, channel]");
  for (size_t i = 0; i < 3; ++i) {
    if (names[i] == "height") c.height = shape[i];
    else if (names[i] == "width") c.width = shape[i];
    else if (names[i] == "channel" || names[i] == "channels") c.channels = shape[i];
  }
  EMB_CHECK(c.height > 0 && c.width > 0 && c.channels > 0, where, ": names ", names[0], ", ", names[1], ", ",
            names[2], " must be height, width and channel(s)");
}

void read_modality(const std::string& path, const Json& info, const std::string& info_path, LerobotDataset& d) {
  Json m = read_json(path);
  auto slices = [&](const char* part, const char* default_column, std::vector<ColumnSlice>& out) {
    EMB_CHECK(m.contains(part) && m.at(part).is_object() && !m.at(part).empty(), path, ": missing \"", part, "\" slices");
    for (const auto& [name, s] : m.at(part).items()) {
      std::string where = str(path, ": ", part, ".", name);
      ColumnSlice c;
      c.name = name, c.column = s.contains("original_key") ? field<std::string>(s, "original_key", where) : default_column;
      c.start = field<int64_t>(s, "start", where), c.end = field<int64_t>(s, "end", where);
      if (s.contains("absolute")) c.absolute = field<bool>(s, "absolute", where);
      if (s.contains("rotation_type") && !s.at("rotation_type").is_null())
        c.rotation_type = field<std::string>(s, "rotation_type", where);
      // data.upstream_config converts such a key from this type (upstream's RotationType).
      EMB_CHECK(c.rotation_type.empty() || is_rotation_type(c.rotation_type), where, ": rotation_type '",
                c.rotation_type, "' is not one of upstream's (", rotation_types_text(), ")");
      if (s.contains("dtype")) c.continuous = field<std::string>(s, "dtype", where).rfind("float", 0) == 0;
      int64_t width = feature_width(info, c.column, info_path);
      EMB_CHECK(0 <= c.start && c.start < c.end && c.end <= width, where, ": slice [", c.start, ", ", c.end,
                ") outside ", c.column, "'s ", width, " values");
      out.push_back(c);
    }
  };
  d.state.clear(), d.action.clear();
  slices("state", "observation.state", d.state);
  slices("action", "action", d.action);
  d.has_modality = true;
  if (m.contains("video")) {
    std::vector<LerobotCamera> named;
    for (const auto& [name, v] : m.at("video").items()) {
      std::string key = v.contains("original_key") ? field<std::string>(v, "original_key", path + ": video." + name)
                                                   : "observation.images." + name;
      auto cam = std::find_if(d.cameras.begin(), d.cameras.end(), [&](const LerobotCamera& c) { return c.key == key; });
      EMB_CHECK(cam != d.cameras.end(), path, ": video.", name, ": no video feature \"", key, "\" in ", info_path);
      named.push_back(*cam);
      named.back().view = name;
    }
    d.cameras = std::move(named);
  }
  if (m.contains("annotation") && !m.at("annotation").empty()) {
    Json::const_iterator first = m.at("annotation").begin();
    d.task_column = first.value().contains("original_key")
                        ? field<std::string>(first.value(), "original_key", path + ": annotation." + first.key())
                        : "annotation." + first.key();
  }
}

void read_v21(const Json& info, const std::string& info_path, LerobotDataset& d) {
  std::string meta = d.root + "/meta/";
  for (const Json& t : read_jsonl(meta + "tasks.jsonl")) {
    int64_t i = field<int64_t>(t, "task_index", meta + "tasks.jsonl");
    EMB_CHECK(i >= 0 && i < 1000000, meta, "tasks.jsonl: task_index ", i, " out of range");
    if (size_t(i) >= d.tasks.size()) d.tasks.resize(size_t(i) + 1);
    d.tasks[size_t(i)] = field<std::string>(t, "task", meta + "tasks.jsonl");
  }
  std::string data_path = field<std::string>(info, "data_path", info_path);
  std::string video_path = d.cameras.empty() ? "" : field<std::string>(info, "video_path", info_path);
  int64_t chunks_size = info.contains("chunks_size") ? field<int64_t>(info, "chunks_size", info_path) : 1000;
  EMB_CHECK(chunks_size > 0, info_path, ": chunks_size ", chunks_size, " must be positive");
  for (const Json& e : read_jsonl(meta + "episodes.jsonl")) {
    std::string where = meta + "episodes.jsonl";
    LerobotEpisode ep;
    ep.index = field<int64_t>(e, "episode_index", where);
    ep.length = field<int64_t>(e, "length", where);
    ep.tasks = field<std::vector<std::string>>(e, "tasks", where);
    std::map<std::string, std::string> values{{"episode_chunk", std::to_string(ep.index / chunks_size)},
                                              {"episode_index", std::to_string(ep.index)}};
    ep.data_file = d.root + "/" + format_path(data_path, values, info_path);
    for (const LerobotCamera& c : d.cameras) {
      values["video_key"] = c.key;
      ep.video_files.push_back(d.root + "/" + format_path(video_path, values, info_path));
      ep.video_from.push_back(0), ep.video_to.push_back(std::numeric_limits<double>::infinity());
    }
    d.episodes.push_back(ep);
  }
  std::string stats = meta + "episodes_stats.jsonl";
  if (fs::exists(stats)) {
    d.stats_file = stats;
    for (const Json& e : read_jsonl(stats)) {
      int64_t i = field<int64_t>(e, "episode_index", stats);
      Json columns = field<Json>(e, "stats", stats);
      for (const auto& [column, s] : columns.items())
        d.episode_stats[i][column] = stats_of(s, str(stats, ": episode ", i, " ", column));
    }
  }
}

// The per-episode rows of every meta/episodes/chunk-*/file-*.parquet, in file order.
void read_v30(const Json& info, const std::string& info_path, LerobotDataset& d) {
  std::string meta = d.root + "/meta/";
  parquet::ParquetFile tasks = parquet::ParquetFile::open(meta + "tasks.parquet");
  parquet::ColumnData task_index = tasks.read("task_index");
  parquet::ColumnData task_text = tasks.read(tasks.has("task") ? "task" : "__index_level_0__");
  for (int64_t r = 0; r < task_index.rows(); ++r) {
    int64_t i = task_index.ints[size_t(r)];
    EMB_CHECK(i >= 0 && i < 1000000, tasks.path(), ": column task_index: ", i, " out of range in row ", r);
    if (size_t(i) >= d.tasks.size()) d.tasks.resize(size_t(i) + 1);
    d.tasks[size_t(i)] = task_text.strings[size_t(r)];
  }
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& chunk : fs::directory_iterator(meta + "episodes", ec))
    for (const auto& f : fs::directory_iterator(chunk.path()))
      if (f.path().extension() == ".parquet") files.push_back(f.path().string());
  std::sort(files.begin(), files.end());
  EMB_CHECK(!files.empty(), meta, "episodes: no chunk-*/file-*.parquet (a LeRobot v3.0 dataset needs them)");
  std::string data_path = field<std::string>(info, "data_path", info_path);
  std::string video_path = d.cameras.empty() ? "" : field<std::string>(info, "video_path", info_path);
  for (const std::string& path : files) {
    parquet::ParquetFile f = parquet::ParquetFile::open(path);
    auto ints = [&](const std::string& c) { return f.read(c).ints; };
    std::vector<int64_t> index = ints("episode_index"), length = ints("length"), data_chunk = ints("data/chunk_index"),
                         data_file = ints("data/file_index"), from = ints("dataset_from_index"), to = ints("dataset_to_index");
    parquet::ColumnData task_lists = f.read("tasks");
    std::vector<std::vector<int64_t>> video_chunk, video_file;
    std::vector<std::vector<double>> video_from, video_to;
    for (const LerobotCamera& c : d.cameras) {
      std::string v = "videos/" + c.key + "/";
      video_chunk.push_back(ints(v + "chunk_index")), video_file.push_back(ints(v + "file_index"));
      video_from.push_back(f.read(v + "from_timestamp").reals), video_to.push_back(f.read(v + "to_timestamp").reals);
    }
    std::map<std::string, parquet::ColumnData> stats;
    for (const char* column : {"observation.state", "action"})
      for (const char* s : {"mean", "min", "max"})
        if (f.has(str("stats/", column, "/", s))) stats[str(column, "/", s)] = f.read(str("stats/", column, "/", s));
    if (!stats.empty()) d.stats_file = path;
    for (int64_t r = 0; r < f.rows(); ++r) {
      LerobotEpisode ep;
      size_t i = size_t(r);
      ep.index = index[i], ep.length = length[i], ep.from_index = from[i], ep.to_index = to[i];
      EMB_CHECK(to[i] - from[i] == length[i], path, ": episode ", ep.index, ": dataset_to_index - dataset_from_index = ",
                to[i] - from[i], " but length = ", length[i]);
      for (int64_t k = task_lists.row_offsets[i]; k < task_lists.row_offsets[i + 1]; ++k)
        ep.tasks.push_back(task_lists.strings[size_t(k)]);
      ep.data_file = d.root + "/" + format_path(data_path, {{"chunk_index", std::to_string(data_chunk[i])},
                                                            {"file_index", std::to_string(data_file[i])}}, info_path);
      for (size_t c = 0; c < d.cameras.size(); ++c) {
        ep.video_files.push_back(d.root + "/" + format_path(video_path, {{"video_key", d.cameras[c].key},
                                                                        {"chunk_index", std::to_string(video_chunk[c][i])},
                                                                        {"file_index", std::to_string(video_file[c][i])}},
                                                            info_path));
        ep.video_from.push_back(video_from[c][i]), ep.video_to.push_back(video_to[c][i]);
        EMB_CHECK(video_from[c][i] >= 0 && video_to[c][i] > video_from[c][i], path, ": episode ", ep.index, ": videos/",
                  d.cameras[c].key, " span [", video_from[c][i], ", ", video_to[c][i], ") is empty or negative");
      }
      for (const auto& [name, column] : stats) {
        std::string col = name.substr(0, name.rfind('/')), stat = name.substr(name.rfind('/') + 1);
        RecordedStats& s = d.episode_stats[ep.index][col];
        std::vector<double>& dst = stat == "mean" ? s.mean : stat == "min" ? s.min : s.max;
        for (int64_t k = column.row_offsets[i]; k < column.row_offsets[i + 1]; ++k) dst.push_back(column.number(k));
      }
      d.episodes.push_back(ep);
    }
  }
}

// The sub-keys `keys` of `slices`, in that order (all of them, as they are, when `keys` is empty).
void keep_sub_keys(std::vector<ColumnSlice>& slices, const std::vector<std::string>& keys, const char* part,
                   const std::string& modality) {
  if (keys.empty()) return;
  std::vector<ColumnSlice> kept;
  for (const std::string& key : keys) {
    auto it = std::find_if(slices.begin(), slices.end(), [&](const ColumnSlice& c) { return c.name == key; });
    if (it == slices.end()) {
      std::string names;
      for (const ColumnSlice& c : slices) names += (names.empty() ? "" : ", ") + c.name;
      throw Error(str(modality, ": --", part, "-keys: no ", part, " sub-key '", key, "' (its ", part, " sub-keys: ",
                      names, ")"),
                  kExitInput);
    }
    EMB_CHECK(std::none_of(kept.begin(), kept.end(), [&](const ColumnSlice& c) { return c.name == key; }),
              "--", part, "-keys: '", key, "' named twice");
    kept.push_back(*it);
  }
  slices = std::move(kept);
}

}  // namespace

LerobotDataset read_lerobot_dataset(const std::string& root, const std::string& modality_path, const SubKeyChoice& keys) {
  LerobotDataset d;
  d.root = root;
  std::string info_path = root + "/meta/info.json";
  Json info = read_json(info_path);
  d.version = field<std::string>(info, "codebase_version", info_path);
  d.fps = field<double>(info, "fps", info_path);
  EMB_CHECK(d.fps > 0, info_path, ": fps ", d.fps, " must be positive");
  EMB_CHECK(info.contains("features") && info.at("features").is_object(), info_path, ": missing \"features\"");
  for (const auto& [key, feature] : info.at("features").items()) {
    if (!feature.contains("dtype") || feature.at("dtype") != "video") continue;
    LerobotCamera c;
    c.key = key, c.view = key.substr(key.rfind('.') + 1), c.fps = d.fps;
    for (const char* video_info : {"info", "video_info"})  // v2.1 / v2.0
      if (feature.contains(video_info) && feature.at(video_info).contains("video.fps"))
        c.fps = field<double>(feature.at(video_info), "video.fps", str(info_path, ": ", key, ".", video_info));
    read_video_shape(feature, info_path + ": " + key, c);
    d.cameras.push_back(c);
  }
  for (const char* column : {"observation.state", "action"})
    if (info.at("features").contains(column)) {
      ColumnSlice whole;
      whole.name = whole.column = column, whole.end = feature_width(info, column, info_path);
      (std::string(column) == "action" ? d.action : d.state).push_back(whole);
    }
  std::string modality = modality_path.empty() ? root + "/meta/modality.json" : modality_path;
  if (!modality_path.empty() || fs::exists(modality)) read_modality(modality, info, info_path, d);
  EMB_CHECK(!d.state.empty() && !d.action.empty(), info_path,
            ": no observation.state / action features (name the columns with --modality FILE)");
  if (!keys.state.empty() || !keys.action.empty()) {
    if (!d.has_modality)
      throw Error(str(root, ": --state-keys / --action-keys choose sub-keys of GR00T's meta/modality.json, and the "
                            "dataset has none (give one with --modality FILE)"),
                  kExitInput);
    keep_sub_keys(d.state, keys.state, "state", modality);
    keep_sub_keys(d.action, keys.action, "action", modality);
  }

  if (d.version == "v2.1" || d.version == "v2.0") read_v21(info, info_path, d);
  else if (d.version == "v3.0") read_v30(info, info_path, d);
  else throw Error(str(info_path, ": codebase_version ", d.version, " is not supported (v2.1 or v3.0)"));

  EMB_CHECK(!d.episodes.empty(), root, "/meta: no episodes");
  for (const LerobotEpisode& e : d.episodes) {
    EMB_CHECK(e.length > 0, root, "/meta: episode ", e.index, " has length ", e.length);
    EMB_CHECK(fs::exists(e.data_file), e.data_file, ": missing (data of episode ", e.index, ")");
    for (const std::string& v : e.video_files) EMB_CHECK(fs::exists(v), v, ": missing (video of episode ", e.index, ")");
  }
  std::string stats = root + "/meta/stats.json";
  if (fs::exists(stats)) {
    Json columns = read_json(stats);
    for (const auto& [column, s] : columns.items())
      if (s.is_object()) d.dataset_stats[column] = stats_of(s, stats + ": " + column);
  }
  return d;
}

}  // namespace emb
