// The one rule that turns a sample into query tokens (MODEL.md "Packed batch"), used by the
// packer (src/data) and the synthetic batches (src/model) alike:
//   gr00t  state, n_future future tokens, horizon action tokens; blk 0, grp 1, pos (i, 0, 0)
//          with i the index within the sample
//   wan    clean video patches (grp 0), then the same patches noisy (grp 1), in (f, h, w)
//          order with pos (f, h, w) in patch units and blk = f·pt / fpb; then per block b the
//          Ha action tokens, grp 1, blk b, pos (b·Ha + i, 0, 0) for action i of the block
//   wan with first_frame_block (DreamZero): blocks are frame 0 alone, then fpb frames each;
//          clean video blk = its latent frame; noisy video, actions (grp 1) and states (grp 2)
//          blk = the first latent frame of their block (0 for noisy frame 0, 1 + b·fpb for
//          block b): what the teacher_forcing mask reads (kernels/op_types.hpp). After the
//          actions, per block b the Ns state tokens, pos (b·Ns + k, 0, 0)
// Padding tokens (packing = off) have seq −1, kind kPad and zero blk, grp and pos.
#pragma once
#include <cstdint>

#include "batch/packed_batch.hpp"
#include "config/token_config.hpp"

namespace emb {

// Action blocks of a wan sample of `latent_frames` frames (the last may be partial; with
// first_frame_block frame 0 is not one of them).
int sample_blocks(const TokenConfig& cfg, int latent_frames);
// Query tokens of one sample (wan: of `latent_frames` frames; gr00t ignores it).
int64_t sample_query_tokens(const TokenConfig& cfg, int latent_frames);
// Appends one sample's seq, kind, blk, grp and pos to b (slot = its seq).
void append_sample_tokens(const TokenConfig& cfg, int latent_frames, int32_t slot, PackedBatch& b);
void append_padding_tokens(int64_t n, PackedBatch& b);
// Context tokens of a sample with n_context of its own: wan pads its text to text_len rows
// (zeros, part of the sample: attended, counted by the packer and the planner).
int64_t sample_context_tokens(const TokenConfig& cfg, int64_t n_context);

}  // namespace emb
