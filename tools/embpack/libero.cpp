#include "libero.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "context_features.hpp"
#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "progress.hpp"

namespace emb {

namespace {

constexpr const char* kViews[] = {"agentview", "eye_in_hand"};

std::string instruction_of(const H5File& f) {
  if (f.has_attr("/data", "problem_info")) {
    nlohmann::json info = nlohmann::json::parse(f.attr_string("/data", "problem_info"), nullptr, false);
    if (info.is_object() && info.contains("language_instruction") && info["language_instruction"].is_string())
      return info["language_instruction"];
  }
  if (f.has_attr("/data", "language_instruction")) return f.attr_string("/data", "language_instruction");
  std::string stem = std::filesystem::path(f.path()).stem().string();
  if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, "_demo") == 0) stem.resize(stem.size() - 5);
  std::replace(stem.begin(), stem.end(), '_', ' ');
  return stem;
}

// demo_0, demo_1, ..., demo_10 in numeric order.
std::vector<std::string> demos_of(const H5File& f) {
  std::vector<std::string> demos;
  for (const std::string& name : f.members("/data"))
    if (name.rfind("demo_", 0) == 0) demos.push_back(name);
  if (demos.empty()) f.fail("/data", "no demo_<i> groups");
  std::sort(demos.begin(), demos.end(), [](const std::string& a, const std::string& b) {
    return std::make_pair(a.size(), a) < std::make_pair(b.size(), b);
  });
  return demos;
}

// Reads a [T, width] table; the width must match `width` once it is set.
std::vector<float> read_table(const H5File& f, const std::string& ds, int64_t rows, int64_t& width) {
  std::vector<int64_t> d = f.dims(ds);
  if (d.empty() || d.size() > 2 || d[0] != rows)
    f.fail(ds, str("expected [", rows, ", n] values (one row per action), found rank ", d.size(), " with ", d.empty() ? 0 : d[0], " rows"));
  int64_t w = d.size() == 2 ? d[1] : 1;
  if (width >= 0 && w != width) f.fail(ds, str("expected width ", width, " (as in earlier demos), found ", w));
  width = w;
  std::vector<float> v = f.read_as_float(ds);
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) f.fail(ds, str("non-finite value at row ", int64_t(i) / std::max<int64_t>(w, 1)));
  return v;
}

struct Widths {
  int64_t action = -1, joint = -1, gripper = -1, ee = -1, reward = -1, done = -1;
  bool has_ee = false, has_rewards = false;
  std::vector<std::array<int64_t, 2>> view_hw;  // per view, -1 when absent
};

void append_demo(const H5File& f, const std::string& demo, int32_t task, const std::string& text,
                 const ContextFeatures& features, const LiberoOptions& o, Widths& w, PackedData& p) {
  std::string g = "/data/" + demo;
  std::vector<int64_t> ad = f.dims(g + "/actions");
  if (ad.size() != 2) f.fail(g + "/actions", str("expected [T, A], found rank ", ad.size()));
  int64_t T = ad[0];
  if (T < 1) f.fail(g + "/actions", "empty demo");
  std::vector<float> actions = read_table(f, g + "/actions", T, w.action);
  std::vector<float> joint = read_table(f, g + "/obs/joint_states", T, w.joint);
  std::vector<float> grip = read_table(f, g + "/obs/gripper_states", T, w.gripper);
  bool first = p.episodes() == 0;
  if (first) w.has_ee = f.has(g + "/obs/ee_states"), w.has_rewards = f.has(g + "/rewards");
  std::vector<float> ee = w.has_ee ? read_table(f, g + "/obs/ee_states", T, w.ee) : std::vector<float>();
  p.state_dim = w.joint + w.gripper + (w.has_ee ? w.ee : 0);
  p.action_dim = w.action;
  for (int64_t t = 0; t < T; ++t) {
    p.state.insert(p.state.end(), joint.begin() + t * w.joint, joint.begin() + (t + 1) * w.joint);
    p.state.insert(p.state.end(), grip.begin() + t * w.gripper, grip.begin() + (t + 1) * w.gripper);
    if (w.has_ee) p.state.insert(p.state.end(), ee.begin() + t * w.ee, ee.begin() + (t + 1) * w.ee);
  }
  p.action.insert(p.action.end(), actions.begin(), actions.end());
  if (w.has_rewards) {
    std::vector<float> r = read_table(f, g + "/rewards", T, w.reward);
    std::vector<float> d = f.has(g + "/dones") ? read_table(f, g + "/dones", T, w.done) : std::vector<float>(size_t(T), 0.f);
    p.reward.insert(p.reward.end(), r.begin(), r.end());
    for (float x : d) p.done.push_back(x != 0 ? 1 : 0);
  }
  if (first) {
    for (const char* view : kViews) {
      std::string ds = g + "/obs/" + view + "_rgb";
      if (!f.has(ds)) continue;
      std::vector<int64_t> d = f.expect(ds, Elem::u8, 4);
      VideoView v;
      v.name = view, v.height = d[1], v.width = d[2];
      p.videos.push_back(v);
    }
  }
  VarlenFeatures& vl = p.features["vl"];
  std::vector<std::vector<uint8_t>> frames;
  for (VideoView& v : p.videos) {
    std::string ds = g + "/obs/" + v.name + "_rgb";
    std::vector<int64_t> d = f.expect(ds, Elem::u8, 4);
    if (d[0] != T || d[1] != v.height || d[2] != v.width || d[3] != 3)
      f.fail(ds, str("expected [", T, ", ", v.height, ", ", v.width, ", 3] frames"));
    frames.push_back(f.read_all<uint8_t>(ds));
    v.frames.insert(v.frames.end(), frames.back().begin(), frames.back().end());
  }
  for (int64_t t = 0; t < T; ++t) {
    for (size_t i = 0; i < frames.size(); ++i) {
      const VideoView& v = p.videos[i];
      features.add_image(&frames[i][size_t(t * v.height * v.width * 3)], v.height, v.width, o.vl_grid, vl.values);
    }
    features.add_instruction(text, vl.values);
    vl.offsets.push_back(int64_t(vl.values.size()) / features.dim());
  }
  p.add_episode(T, task, 0);
}

}  // namespace

PackedData convert_libero(const std::vector<std::string>& inputs, const LiberoOptions& o) {
  PackedData p;
  p.family = "gr00t";
  p.fps = o.fps;
  ContextFeatures features(o.d_vl, 0);
  p.features["vl"].dim = o.d_vl;
  Widths w;
  std::string sources;
  for (const std::string& path : inputs) {
    H5File f = H5File::open(path);
    if (!f.has("/data")) f.fail("/data", "missing group (not a robomimic/LIBERO file)");
    std::string text = instruction_of(f);
    int32_t task = int32_t(p.task_text.size());
    p.task_text.push_back(text);
    std::vector<std::string> demos = demos_of(f);
    Progress progress(path, int64_t(demos.size()), o.progress);
    for (const std::string& demo : demos) {
      append_demo(f, demo, task, text, features, o, w, p);
      progress.advance();
    }
    sources += (sources.empty() ? "libero:" : ",") + path;
  }
  p.source = sources;
  return p;
}

}  // namespace emb
