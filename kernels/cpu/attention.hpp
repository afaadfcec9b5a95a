// Varlen multi-head attention on packed sequences, flash style: query tiles stream over key
// tiles with an online softmax, so no [T, T] matrix is ever stored, and tiles whose pairs are
// all masked are skipped from per-tile summaries of seq/blk/grp. The forward saves the
// log-sum-exp per (token, head); the backward recomputes the probabilities from it.
//
// Masks: kernels/op_types.hpp (full, block_causal, prefix, cross, teacher_forcing; MODEL.md
// "Packed batch").
// Padding: a token with seq < 0 is padding (packing = off); no pair involving a padding query
// or key is allowed. Padding rows get output 0, lse = -inf, and contribute no gradient. A real
// row with no allowed key is an error (MODEL.md calls it a bug): the forward throws emb::Error
// naming the first such row; an empty context (Tk = 0) is that error for every real query.
// NaN: a NaN score of an allowed pair makes its row's output and lse NaN (and its gradients
// in backward), and so does a head whose every allowed score overflowed to -Inf (its row is
// not keyless: train.nan_policy judges the NaN loss). kernels/cuda does all of this the same
// way (tests on both backends), except the -Inf rows, which it still reports as keyless.
//
// Tiles are kAttnTileQ queries × kAttnTileK keys (kernels/attention_tiles.hpp). A tile pair whose summaries prove no pair
// allowed is skipped; one whose summaries prove every pair allowed skips the per-pair mask. The
// others' allowed pairs are decided once per call (kernels/cpu/attention_tile_masks.hpp), not
// per head: the rule does not depend on the head.
// Scratch: a few tiles per thread, allocated per call. The forward runs OpenMP over
// (head, query tile); the backward over heads (each head owns its columns of dq, dk, dv).
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

// The masks and the index are the backends' shared types (kernels/op_types.hpp).
using emb::AttnIndex;
using emb::AttnMask;

// True iff query i may attend key j under `idx` (the scalar definition the tiles must match).
bool attn_allowed(const AttnIndex& idx, int64_t i, int64_t j);

// q [Tq, H*hd], k, v [Tk, H*hd] -> out [Tq, H*hd], lse [Tq, H]. Scale 1/sqrt(hd).
void attention_forward(const float* q, const float* k, const float* v, float* out, float* lse, int64_t Tq,
                       int64_t Tk, int H, int hd, const AttnIndex& idx);
// dq += ..., dk += ..., dv += ... (accumulating, like every backward).
void attention_backward(const float* q, const float* k, const float* v, const float* out, const float* lse,
                        const float* dout, float* dq, float* dk, float* dv, int64_t Tq, int64_t Tk, int H, int hd,
                        const AttnIndex& idx);

// Counts allowed (query, key) pairs: the FLOP model of --plan and the tile-skipping benchmark.
int64_t attn_allowed_pairs(const AttnIndex& idx, int64_t Tq, int64_t Tk);

// How the kernels see the tile grid: `visited` tile pairs hold at least one allowed pair
// (the others are skipped), `dense` of those hold only allowed pairs (no per-pair mask).
struct AttnTileStats {
  int64_t total = 0;
  int64_t visited = 0;
  int64_t dense = 0;
};
AttnTileStats attention_tile_stats(const AttnIndex& idx, int64_t Tq, int64_t Tk);

}  // namespace emb::cpu
