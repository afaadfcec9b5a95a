// Rollout videos: RGB frames to an .mp4 (MPEG-4 Part 2, FFmpeg's built-in encoder, so any
// FFmpeg build has it) through the libav libraries embpack already links. Written to
// "<path>.tmp" and renamed when complete.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emb {

// frames: each [height, width, 3]; each pixel is drawn as a scale × scale block.
void write_mp4(const std::string& path, const std::vector<std::vector<uint8_t>>& frames, int height, int width,
               int fps, int scale);

}  // namespace emb
