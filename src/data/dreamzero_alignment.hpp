// Which raw steps of its episode feed a DreamZero-layout sample (DATA.md "DreamZero alignment"),
// the rule of upstream's DROID loader (dreamzero ab790c1 groot/vla/data/dataset/lerobot_sharded.py,
// ShardedLeRobotSubLangSingleActionChunkDatasetDROID): the sample at step `row` is a clip of
// T = 1 + 4(F − 1) frames, frame k at step row + k·stride; latent frame 0 is frame 0 and latent
// frame j ≥ 1 holds frames 4j − 3 .. 4j (the VAE's temporal 4×). Each block has an anchor: the
// frame just before its first one (frame 0 for the block holding latent frame 0). The block's Ha
// actions are the steps anchor .. anchor + Ha − 1 and its Ns states the steps anchor ..
// anchor + Ns − 1, so the actions taken from the anchor's observation lead to the block's frames
// (upstream: per chunk anchor a, frames a + 3, .., a + 24, actions a .. a + 23, state a). Every
// step past the episode's end reads its last step.
#pragma once
#include <cstdint>

#include "config/token_config.hpp"

namespace emb {

// The clip's raw frames T = 1 + 4(F − 1) for F latent frames (the VAE's causal chunking: frame 0 alone,
// then 4 frames per latent frame). `embpack features --dreamzero` and the loader of
// model.encoders = online take a clip's frames by these rules, so both encode the same pictures.
inline int clip_raw_frames(int latent_frames) { return 1 + 4 * (latent_frames - 1); }

// The step of clip frame k of the clip at `row`, in an episode whose steps end before `end`.
int64_t clip_frame_step(int64_t row, int64_t k, int64_t stride, int64_t end);

// The clip frame of block b's anchor: 4(j − 1) for the block's first latent frame j ≥ 1, 0 for j = 0
// (blocks of fpb latent frames, after latent frame 0's own block when cfg.first_frame_block).
int64_t block_anchor_frame(int64_t b, const TokenConfig& cfg);

}  // namespace emb
