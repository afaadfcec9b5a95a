#include "frame_table.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace emb {

namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    cells.push_back(cell);
  }
  return cells;
}

// Index of every column named prefix0, prefix1, ... (in order).
std::vector<int> numbered_columns(const std::vector<std::string>& header, const std::string& prefix) {
  std::vector<int> cols;
  for (int i = 0;; ++i) {
    auto it = std::find(header.begin(), header.end(), prefix + std::to_string(i));
    if (it == header.end()) return cols;
    cols.push_back(int(it - header.begin()));
  }
}

double number(const std::string& path, int64_t row, const std::string& cell) {
  try {
    size_t used = 0;
    double v = std::stod(cell, &used);
    if (used == cell.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw Error(str(path, ":", row, ": '", cell, "' is not a finite number"));
}

FrameTable read_csv(const std::string& path, int views) {
  FrameTable t;
  std::ifstream in(path);
  std::string line;
  EMB_CHECK(std::getline(in, line), path, ":1: empty table (expected a header line)");
  std::vector<std::string> header = split_csv(line);
  auto column = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : int(it - header.begin());
  };
  int ep_col = column("episode");
  EMB_CHECK(ep_col >= 0, path, ":1: missing column 'episode'");
  std::vector<int> frame_cols = numbered_columns(header, "frame_");
  if (frame_cols.empty() && column("frame") >= 0) frame_cols.assign(size_t(views), column("frame"));
  EMB_CHECK(int(frame_cols.size()) == views, path, ":1: expected a 'frame' column or frame_0..frame_", views - 1);
  std::vector<int> state_cols = numbered_columns(header, "state_"), action_cols = numbered_columns(header, "action_");
  EMB_CHECK(!action_cols.empty(), path, ":1: missing columns action_0, action_1, ...");
  EMB_CHECK(!state_cols.empty(), path, ":1: missing columns state_0, state_1, ...");
  t.state_dim = int64_t(state_cols.size()), t.action_dim = int64_t(action_cols.size());
  t.frame.resize(size_t(views));
  int64_t row = 1;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty()) continue;
    std::vector<std::string> cells = split_csv(line);
    EMB_CHECK(cells.size() == header.size(), path, ":", row, ": expected ", header.size(), " cells, found ", cells.size());
    t.episode.push_back(int64_t(number(path, row, cells[ep_col])));
    for (int v = 0; v < views; ++v) t.frame[v].push_back(int64_t(number(path, row, cells[frame_cols[v]])));
    for (int c : state_cols) t.state.push_back(float(number(path, row, cells[c])));
    for (int c : action_cols) t.action.push_back(float(number(path, row, cells[c])));
  }
  std::string stem = std::filesystem::path(path).stem().string();
  std::replace(stem.begin(), stem.end(), '_', ' ');
  t.instruction = stem;
  return t;
}

FrameTable read_json(const std::string& path, int views) {
  FrameTable t;
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  EMB_CHECK(j.is_object() && j.contains("steps") && j["steps"].is_array(), path, ": expected an object with a 'steps' array");
  t.instruction = j.value("instruction", std::filesystem::path(path).stem().string());
  t.fps = j.value("fps", 10.0);
  t.frame.resize(size_t(views));
  int64_t i = 0;
  for (const auto& s : j["steps"]) {
    std::string where = str(path, ": steps[", i++, "]");
    EMB_CHECK(s.is_object() && s.contains("episode") && s.contains("frame") && s.contains("state") && s.contains("action"),
              where, ": expected keys episode, frame, state, action");
    t.episode.push_back(s["episode"].get<int64_t>());
    const auto& f = s["frame"];
    EMB_CHECK(f.is_number_integer() || (f.is_array() && int(f.size()) == views), where, ": 'frame' must be an integer or ", views, " integers");
    for (int v = 0; v < views; ++v) t.frame[v].push_back(f.is_array() ? f[v].get<int64_t>() : f.get<int64_t>());
    for (const char* key : {"state", "action"}) {
      std::vector<float> values = s[key].get<std::vector<float>>();
      int64_t& dim = key[0] == 's' ? t.state_dim : t.action_dim;
      EMB_CHECK(!values.empty() && (i == 1 || int64_t(values.size()) == dim), where, ": '", key, "' must have ", dim, " values");
      dim = int64_t(values.size());
      for (float x : values) EMB_CHECK(std::isfinite(x), where, ": non-finite '", key, "' value");
      (key[0] == 's' ? t.state : t.action).insert((key[0] == 's' ? t.state : t.action).end(), values.begin(), values.end());
    }
  }
  return t;
}

}  // namespace

FrameTable read_frame_table(const std::string& path, int views) {
  check_readable_file(path);
  std::string ext = std::filesystem::path(path).extension().string();
  EMB_CHECK(ext == ".csv" || ext == ".json", path, ": table must be .csv or .json");
  FrameTable t;
  try {
    t = ext == ".csv" ? read_csv(path, views) : read_json(path, views);
  } catch (const nlohmann::json::exception& e) {
    throw Error(str(path, ": ", e.what()));
  }
  t.path = path;
  EMB_CHECK(t.steps() > 0, path, ": no steps");
  for (int64_t s = 1; s < t.steps(); ++s)
    EMB_CHECK(t.episode[s] >= t.episode[s - 1], path, ": step ", s, ": episode ", t.episode[s], " after ", t.episode[s - 1], " (must not decrease)");
  return t;
}

}  // namespace emb
