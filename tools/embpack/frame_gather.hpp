// Decodes one video and copies, for every output row s with frame_of_row[s] >= 0, frame
// frame_of_row[s] (resized to height × width RGB) into rows + s·height·width·3: how a
// converter turns a video into the frames its steps show. Rows whose frame is the one just past
// the video's end show its last frame (the nearest by timestamp, as Isaac-GR00T's loader
// decodes: its demo data's last timestamps point there); rows further beyond are left
// untouched, the caller compares them with the returned frame count.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "video_decoder.hpp"

namespace emb {

VideoInfo gather_frames(const std::string& path, const std::vector<int64_t>& frame_of_row, int height, int width,
                        int threads, uint8_t* rows, const std::function<void()>& on_frame);

}  // namespace emb
