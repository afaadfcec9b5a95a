// The sidecar table that aligns video frames to steps (how LeRobot-style datasets keep
// video): one row per step, in step order, with
//   episode   int, non-decreasing; a new value starts a new episode
//   frame     int, the frame index in every video, or frame_<v> (v = 0, 1, ...) per video
//   state_<i>, action_<i>   floats (i = 0, 1, ...)
// CSV: a header line with those column names. JSON: {"instruction": "...", "fps": 10,
// "steps": [{"episode": 0, "frame": 3 | [3, 3], "state": [...], "action": [...]}, ...]}.
// A CSV table's instruction is its file name's stem with '_' read as ' '.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emb {

struct FrameTable {
  std::string path, instruction;
  double fps = 10;
  int64_t state_dim = 0, action_dim = 0;
  std::vector<int64_t> episode;              // [S]
  std::vector<std::vector<int64_t>> frame;   // [views][S]
  std::vector<float> state, action;          // [S, dim]
  int64_t steps() const { return int64_t(episode.size()); }
};

// Reads a .csv or .json table for `views` videos; errors name the file and the row.
FrameTable read_frame_table(const std::string& path, int views);

}  // namespace emb
