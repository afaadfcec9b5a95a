#pragma once
// The DiT blocks' self-attention mask, the one decision the blocks, the cost model and the dump
// share.

#include "config/model_config.hpp"
#include "kernels/op_types.hpp"

namespace emb {

// model.self_mask when set, else the family's: gr00t full; wan teacher_forcing when frame 0 is a
// block of its own (first_frame_block, DreamZero), block_causal otherwise.
AttnMask dit_self_mask(const ModelConfig& cfg);

}  // namespace emb
