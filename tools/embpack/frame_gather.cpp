#include "frame_gather.hpp"

#include <algorithm>

namespace emb {

VideoInfo gather_frames(const std::string& path, const std::vector<int64_t>& frame_of_row, int height, int width,
                        int threads, uint8_t* rows, const std::function<void()>& on_frame) {
  size_t frame_bytes = size_t(height) * size_t(width) * 3;
  // rows that show frame f: tables are usually in frame order, so index by frame.
  std::vector<std::vector<int64_t>> rows_of_frame;
  for (size_t s = 0; s < frame_of_row.size(); ++s) {
    int64_t f = frame_of_row[s];
    if (f < 0) continue;
    if (f >= int64_t(rows_of_frame.size())) rows_of_frame.resize(size_t(f) + 1);
    rows_of_frame[size_t(f)].push_back(int64_t(s));
  }
  return decode_video(path, height, width, threads, [&](int64_t f, const uint8_t* rgb) {
    if (f < int64_t(rows_of_frame.size()))
      for (int64_t s : rows_of_frame[size_t(f)]) std::copy(rgb, rgb + frame_bytes, rows + size_t(s) * frame_bytes);
    on_frame();
  });
}

}  // namespace emb
