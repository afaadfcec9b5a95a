// Random packed micro-batch indices for the CUDA tests and benchmarks (host only): samples of
// ragged lengths laid end to end, each with clean blocks (grp 0) followed by noisy blocks
// (grp 1), and a context of ragged length per sample; or DreamZero's sequences (MODEL.md
// "Family wan") for its teacher-forcing mask.
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/op_types.hpp"

namespace emb::cuda::testing {

struct PackedIndex {
  std::vector<int32_t> seq, blk, grp;  // per query token
  std::vector<int32_t> cseq;           // per context token
  TeacherForcing tf;                   // the teacher_forcing mask's parameters (random_dreamzero_index)
};

// `blocks` blocks per sample, each with 1..max_block_tokens clean and as many noisy tokens,
// 1..max_context context tokens per sample, then pad_tail padding tokens (seq = −1).
inline PackedIndex random_packed_index(int samples, int blocks, int max_block_tokens, int max_context, int pad_tail,
                                       std::mt19937& rng) {
  std::uniform_int_distribution<int> block_tokens(1, max_block_tokens), context(1, max_context);
  PackedIndex p;
  for (int s = 0; s < samples; ++s) {
    std::vector<int> per_block(blocks);
    for (int& n : per_block) n = block_tokens(rng);
    for (int g = 0; g < 2; ++g)
      for (int b = 0; b < blocks; ++b)
        for (int t = 0; t < per_block[b]; ++t) {
          p.seq.push_back(s);
          p.blk.push_back(b);
          p.grp.push_back(g);
        }
    for (int c = context(rng); c > 0; --c) p.cseq.push_back(s);
  }
  for (int t = 0; t < pad_tail; ++t) {
    p.seq.push_back(-1);
    p.blk.push_back(0);
    p.grp.push_back(0);
  }
  return p;
}

// DreamZero samples (MODEL.md "Family wan"): 1..max_blocks blocks of fpb latent frames after
// frame 0, 1..max_frame_tokens tokens per frame, per sample [clean video][noisy video][Ha
// actions per block][Ns states per block] with grp 0 / 1 / 1 / 2 and blk = the clean token's
// frame or the first frame of the block; a window of max_chunk·fpb + 1 frames; 1..max_context
// context tokens per sample; then pad_tail padding tokens.
inline PackedIndex random_dreamzero_index(int samples, int max_blocks, int fpb, int max_chunk, int max_frame_tokens,
                                          int max_context, int pad_tail, std::mt19937& rng) {
  std::uniform_int_distribution<int> blocks(1, max_blocks), frame_tokens(1, max_frame_tokens), context(1, max_context),
      actions(1, 2 * fpb), states(1, 2);
  PackedIndex p;
  p.tf = TeacherForcing{fpb, max_chunk * fpb + 1};
  auto push = [&](int32_t s, int32_t grp, int32_t blk) {
    p.seq.push_back(s), p.grp.push_back(grp), p.blk.push_back(blk);
  };
  for (int s = 0; s < samples; ++s) {
    const int nb = blocks(rng), fs = frame_tokens(rng), ha = actions(rng), ns = states(rng);
    for (int grp = 0; grp < 2; ++grp)
      for (int f = 0; f <= nb * fpb; ++f)
        for (int t = 0; t < fs; ++t) push(s, grp, grp == 0 || f == 0 ? f : 1 + (f - 1) / fpb * fpb);
    for (int b = 0; b < nb; ++b)
      for (int t = 0; t < ha; ++t) push(s, 1, 1 + b * fpb);
    for (int b = 0; b < nb; ++b)
      for (int t = 0; t < ns; ++t) push(s, 2, 1 + b * fpb);
    for (int c = context(rng); c > 0; --c) p.cseq.push_back(s);
  }
  for (int t = 0; t < pad_tail; ++t) push(-1, 0, 0);
  return p;
}

}  // namespace emb::cuda::testing
