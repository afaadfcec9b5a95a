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
  const int64_t wanted = int64_t(rows_of_frame.size());
  // The frame before a wanted one: the video's last frame if the wanted one is past its end.
  std::vector<uint8_t> before_wanted(frame_bytes);
  int64_t before_index = -1;
  const VideoInfo info = decode_video(path, height, width, threads, [&](int64_t f, const uint8_t* rgb) {
    if (f < wanted)
      for (int64_t s : rows_of_frame[size_t(f)]) std::copy(rgb, rgb + frame_bytes, rows + size_t(s) * frame_bytes);
    if (f + 1 < wanted && !rows_of_frame[size_t(f + 1)].empty())
      std::copy(rgb, rgb + frame_bytes, before_wanted.begin()), before_index = f;
    on_frame();
  });
  if (info.frames < wanted && before_index == info.frames - 1)
    for (int64_t s : rows_of_frame[size_t(info.frames)])
      std::copy(before_wanted.begin(), before_wanted.end(), rows + size_t(s) * frame_bytes);
  return info;
}

}  // namespace emb
