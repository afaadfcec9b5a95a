#include "video.hpp"

#include <filesystem>

#include "context_features.hpp"
#include "core/error.hpp"
#include "frame_table.hpp"
#include "progress.hpp"
#include "video_decoder.hpp"

namespace emb {

PackedData convert_video(const VideoOptions& o) {
  EMB_CHECK(o.height > 0 && o.width > 0, "video: --height and --width must be positive");
  int views = int(o.videos.size());
  FrameTable table = read_frame_table(o.table, views);
  int64_t S = table.steps();
  PackedData p;
  p.family = "gr00t";
  p.fps = table.fps;
  p.state_dim = table.state_dim, p.action_dim = table.action_dim;
  p.state = table.state, p.action = table.action;
  p.task_text.push_back(table.instruction);
  for (int64_t s = 1, start = 0; s <= S; ++s)  // a new episode id starts a new episode
    if (s == S || table.episode[s] != table.episode[s - 1]) p.add_episode(s - start, 0, 0), start = s;

  size_t frame_bytes = size_t(o.height) * o.width * 3;
  for (int v = 0; v < views; ++v) {
    const std::string& path = o.videos[v];
    VideoView view;
    view.name = std::filesystem::path(path).stem().string();
    view.height = o.height, view.width = o.width;
    view.frames.resize(size_t(S) * frame_bytes);
    // steps that show frame f: the table is usually in frame order, so index by frame.
    std::vector<std::vector<int64_t>> steps_of_frame;
    for (int64_t s = 0; s < S; ++s) {
      int64_t f = table.frame[v][s];
      EMB_CHECK(f >= 0, table.path, ": step ", s, ": frame index ", f, " is negative");
      if (f >= int64_t(steps_of_frame.size())) steps_of_frame.resize(size_t(f) + 1);
      steps_of_frame[size_t(f)].push_back(s);
    }
    Progress progress(path, int64_t(steps_of_frame.size()), o.progress);
    VideoInfo info = decode_video(path, o.height, o.width, o.threads, [&](int64_t f, const uint8_t* rgb) {
      if (f < int64_t(steps_of_frame.size()))
        for (int64_t s : steps_of_frame[size_t(f)]) std::copy(rgb, rgb + frame_bytes, &view.frames[size_t(s) * frame_bytes]);
      progress.advance();
    });
    for (int64_t s = 0; s < S; ++s)
      EMB_CHECK(table.frame[v][s] < info.frames, table.path, ": step ", s, ": frame ", table.frame[v][s],
                " out of range (", path, " has ", info.frames, " frames)");
    p.videos.push_back(std::move(view));
  }
  ContextFeatures features(o.d_vl, 0);
  VarlenFeatures& vl = p.features["vl"];
  vl.dim = o.d_vl;
  for (int64_t s = 0; s < S; ++s) {
    for (const VideoView& v : p.videos)
      features.add_image(&v.frames[size_t(s) * frame_bytes], v.height, v.width, o.vl_grid, vl.values);
    features.add_instruction(table.instruction, vl.values);
    vl.offsets.push_back(int64_t(vl.values.size()) / o.d_vl);
  }
  p.source = "video:" + o.table;
  return p;
}

}  // namespace emb
