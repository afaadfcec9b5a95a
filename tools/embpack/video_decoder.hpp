// Decodes a whole video file with libavformat/libavcodec (frame threads) and resizes every
// frame to RGB24 height × width with libswscale. Unreadable files, missing video streams and
// decode errors (truncated files) are emb::Error naming the file.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace emb {

struct VideoInfo {
  int64_t frames = 0;
  int src_height = 0, src_width = 0;
};

// Calls on_frame(index, rgb) for every frame in decode order with rgb [height, width, 3].
VideoInfo decode_video(const std::string& path, int height, int width, int threads,
                       const std::function<void(int64_t, const uint8_t*)>& on_frame);

}  // namespace emb
