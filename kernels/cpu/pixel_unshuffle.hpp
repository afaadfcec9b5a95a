// Space (and time) to channels of channels-last clips, with an optional mean over groups of
// consecutive unshuffled channels (kernels/op_types.hpp UnshuffleConfig): Wan2.2's 2×2 patchify
// (columns first), its AvgDown3D shortcut (a zero frame in front, time and space offsets, group
// means: the average pooling) and CLIP's 14 × 14 patch rows. Forward only.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

// y [batch·To·(H/fs)·(W/fs), C·ft·fs²/group] from x [batch·T·H·W, C]; each group summed in
// order in fp32, then divided by group (torch's mean).
void pixel_unshuffle_forward(const float* x, int64_t C, float* y, const UnshuffleConfig& cfg);

}  // namespace emb::cpu
