// The camera views of one step laid out as one picture for DreamZero's VAE (its multi-view
// embodiments train on a grid of views, RLinf's DROID recipe a 2×2 grid of 176×320 tiles = 352×640):
// each view resized (bilinear, align_corners = False, no antialias: DreamZero's resize) to the tile
// size and placed row-major in the grid in the given view order; tiles without a view are black.
// Values in [−1, 1] (x/127.5 − 1), the VAE's input range. `embpack features --dreamzero` and the
// step's online encoders (model.encoders = online) tile through this one code.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "encoders/frames/resize.hpp"

namespace emb::encoders {

struct ViewTiling {
  int rows = 2, cols = 2;              // the grid
  int tile_height = 176, tile_width = 320;
  int height() const { return rows * tile_height; }
  int width() const { return cols * tile_width; }
};

// "RxC" and "HxW" (e.g. "2x2", "176x320"); throws emb::Error (exit 2) naming the option
// (grid_option, tile_option: "--tiling" and "--tile" in embpack, the deck keys in training).
ViewTiling parse_view_tiling(const std::string& grid, const std::string& tile, const std::string& grid_option = "--tiling",
                             const std::string& tile_option = "--tile");

class ViewTiler {
 public:
  // views: how many views are placed (<= rows·cols, else emb::Error naming the tiling), each of
  // frame_height × frame_width.
  ViewTiler(const ViewTiling& tiling, int views, int64_t frame_height, int64_t frame_width);
  // frames: per view a uint8 frame [H, W, 3]; out: [height, width, 3] float in [−1, 1].
  void tile(const std::vector<const uint8_t*>& frames, float* out) const;
  // A clip of `frames` frames, each tiled: frame_of(k, v) is view v's uint8 frame of clip frame
  // k; out: [frames, height, width, 3].
  void tile_clip(const std::function<const uint8_t*(int, int)>& frame_of, int frames, float* out) const;
  const ViewTiling& tiling() const { return tiling_; }

 private:
  ViewTiling tiling_;
  int views_;
  int64_t frame_height_, frame_width_;
  frames::ResizeTable rows_, cols_;
};

}  // namespace emb::encoders
