// The one rule that turns a sample into query tokens (MODEL.md "Packed batch"), used by the
// packer (src/data) and the synthetic batches (src/model) alike:
//   gr00t  state, n_future future tokens, horizon action tokens; blk 0, grp 1, pos (i, 0, 0)
//          with i the index within the sample
//   wan    clean video patches (grp 0), then the same patches noisy (grp 1), in (f, h, w)
//          order with pos (f, h, w) in patch units and blk = f·pt / fpb; then per block b the
//          Ha action tokens, grp 1, blk b, pos (b·fpb/pt, 0, i) for action i of the block
// Padding tokens (packing = off) have seq −1, kind kPad and zero blk, grp and pos.
#pragma once
#include <cstdint>

#include "batch/packed_batch.hpp"
#include "config/token_config.hpp"

namespace emb {

// Blocks of a wan sample of `latent_frames` frames (the last may be partial).
int sample_blocks(const TokenConfig& cfg, int latent_frames);
// Query tokens of one sample (wan: of `latent_frames` frames; gr00t ignores it).
int64_t sample_query_tokens(const TokenConfig& cfg, int latent_frames);
// Appends one sample's seq, kind, blk, grp and pos to b (slot = its seq).
void append_sample_tokens(const TokenConfig& cfg, int latent_frames, int32_t slot, PackedBatch& b);
void append_padding_tokens(int64_t n, PackedBatch& b);

}  // namespace emb
