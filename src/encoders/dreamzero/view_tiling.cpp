#include "encoders/dreamzero/view_tiling.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "core/error.hpp"

namespace emb::encoders {

namespace {

// "AxB" with positive integers, else the one-line error naming `option`.
std::pair<int, int> parse_pair(const std::string& text, const std::string& option) {
  int a = 0, b = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%dx%d%c", &a, &b, &tail) != 2 || a <= 0 || b <= 0)
    throw Error(str(option, " ", text, ": expected AxB with positive integers (e.g. 2x2, 176x320)"), kExitInput);
  return {a, b};
}

}  // namespace

ViewTiling parse_view_tiling(const std::string& grid, const std::string& tile, const std::string& grid_option,
                             const std::string& tile_option) {
  ViewTiling t;
  std::tie(t.rows, t.cols) = parse_pair(grid, grid_option);
  std::tie(t.tile_height, t.tile_width) = parse_pair(tile, tile_option);
  return t;
}

ViewTiler::ViewTiler(const ViewTiling& tiling, int views, int64_t frame_height, int64_t frame_width)
    : tiling_(tiling), views_(views), frame_height_(frame_height), frame_width_(frame_width),
      rows_(frames::bilinear_table(frame_height, tiling.tile_height)),
      cols_(frames::bilinear_table(frame_width, tiling.tile_width)) {
  if (views > tiling.rows * tiling.cols)
    throw Error(str("the tiling ", tiling.rows, "x", tiling.cols, ": ", views, " views do not fit in ",
                    tiling.rows * tiling.cols, " tiles (choose fewer views or a larger grid)"),
                kExitInput);
}

void ViewTiler::tile(const std::vector<const uint8_t*>& frames, float* out) const {
  EMB_ASSERT(int(frames.size()) == views_);
  const int64_t th = tiling_.tile_height, tw = tiling_.tile_width, W = tiling_.width();
  std::fill_n(out, int64_t(tiling_.height()) * W * 3, -1.f);
  std::vector<float> scaled(size_t(frame_height_ * frame_width_ * 3)), resized(size_t(th * tw * 3));
  for (int v = 0; v < views_; ++v) {
    std::transform(frames[size_t(v)], frames[size_t(v)] + scaled.size(), scaled.begin(),
                   [](uint8_t x) { return float(x) / 127.5f - 1.f; });
    frames::resize_hwc(scaled.data(), 3, rows_, cols_, resized.data());
    const int64_t r0 = (v / tiling_.cols) * th, c0 = (v % tiling_.cols) * tw;
    for (int64_t y = 0; y < th; ++y)
      std::copy_n(resized.data() + y * tw * 3, tw * 3, out + ((r0 + y) * W + c0) * 3);
  }
}

void ViewTiler::tile_clip(const std::function<const uint8_t*(int, int)>& frame_of, int frames, float* out) const {
  const int64_t frame_values = int64_t(tiling_.height()) * tiling_.width() * 3;
  std::vector<const uint8_t*> views(static_cast<size_t>(views_));
  for (int k = 0; k < frames; ++k) {
    for (int v = 0; v < views_; ++v) views[size_t(v)] = frame_of(k, v);
    tile(views, out + k * frame_values);
  }
}

}  // namespace emb::encoders
