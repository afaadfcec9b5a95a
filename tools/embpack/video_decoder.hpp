// Decodes a video file with libavformat/libavcodec (frame threads) and resizes every frame to
// RGB24 height × width with libswscale. Unreadable files, missing video streams and decode
// errors (truncated files) are emb::Error naming the file.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

namespace emb {

struct VideoInfo {
  int64_t frames = 0;  // frames decoded up to the range's end: all of them when the video ends first
  int src_height = 0, src_width = 0;
};

// The frames [first, end) of a video in presentation order (frame 0 is the first frame).
struct FrameRange {
  int64_t first = 0, end = std::numeric_limits<int64_t>::max();
};

// Calls on_frame(index, rgb) for every frame of `range` in presentation order with rgb
// [height, width, 3], and stops after frame range.end - 1. A range starting past frame 0 is
// reached from the keyframe at or before it (a seek, as LeRobot v3.0 files hold many episodes
// back to back): the frames are those decoding from the start gives, as indexed by timestamp at
// the stream's average frame rate (constant-rate videos, as LeRobot records them).
VideoInfo decode_video(const std::string& path, int height, int width, int threads, FrameRange range,
                       const std::function<void(int64_t, const uint8_t*)>& on_frame);

}  // namespace emb
