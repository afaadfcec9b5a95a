#include "data/dreamzero_alignment.hpp"

#include <algorithm>

namespace emb {

int64_t clip_frame_step(int64_t row, int64_t k, int64_t stride, int64_t end) {
  return std::min(row + k * stride, end - 1);
}

int64_t block_anchor_frame(int64_t b, const TokenConfig& cfg) {
  const int64_t first_latent = (cfg.first_frame_block ? 1 : 0) + b * cfg.frames_per_block;
  return first_latent == 0 ? 0 : 4 * (first_latent - 1);
}

}  // namespace emb
