// Random packed micro-batch indices for the CUDA tests and benchmarks (host only): samples of
// ragged lengths laid end to end, each with clean blocks (grp 0) followed by noisy blocks
// (grp 1), the DreamZero layout of MODEL.md, and a context of ragged length per sample.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace emb::cuda::testing {

struct PackedIndex {
  std::vector<int32_t> seq, blk, grp;  // per query token
  std::vector<int32_t> cseq;           // per context token
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

}  // namespace emb::cuda::testing
