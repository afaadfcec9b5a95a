// `embpack video`: videos (one per camera view) plus a frame table (frame_table.hpp) to a
// gr00t packed file: /video/<view> uint8 [S, H, W, 3] with the frame each step points at,
// state/action from the table, vl tokens from the ContextFeatures stand-in encoder.
#pragma once
#include <string>
#include <vector>

#include "packed_data.hpp"

namespace emb {

struct VideoOptions {
  std::vector<std::string> videos;
  std::string table;
  int height = 64, width = 64, threads = 2;
  int d_vl = 32, vl_grid = 2;
  bool progress = false;
};

PackedData convert_video(const VideoOptions& o);

}  // namespace emb
