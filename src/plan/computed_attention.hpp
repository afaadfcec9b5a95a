// The attention work the tiled kernels do, for the planner's time: they compute every
// 64 x 64 (query, key) tile that holds an allowed pair whole (kernels/attention_tiles.hpp;
// the CUDA kernel tiles by 64 too) and skip the others, so a mask whose blocks do not line up
// with the tiles (block-causal blocks of samples packed at any offset) costs more than its
// allowed pairs. --plan's FLOPs (and MFU) count the allowed pairs; its times, these.
// A tile's fixed work besides its pairs weighs on tiles of few rows or keys (a micro-batch of
// two 13-token samples computes tiles of 26 rows, 4 keys): with the hardware's TilePadding a
// tile of q rows and k keys counts as the pairs of a full tile that cost the same,
// 64 · 64 · (q + rows)(k + keys) / ((64 + rows)(64 + keys)), so the rates measured on full tiles
// hold for every tile.
#pragma once
#include "config/model_config.hpp"
#include "plan/model_cost.hpp"

namespace emb {

// The rows and keys a tile's fixed work costs (Hardware::attention_tile_rows and _keys); none:
// every tile at its pairs.
struct TilePadding {
  double rows = 0, keys = 0;
};

struct ComputedAttention {
  double flops_fwd = 0;   // per sample, as PlanReport::attn_flops_fwd, in full tiles' pairs
  double pair_heads = 0;  // per sample, as PlanReport::attn_pair_heads, in full tiles' pairs
  double masked_pair_heads = 0;  // of pair_heads, those in masked tiles (the mask decided per pair)
};

// Per sample of a micro-batch of `samples` samples of `shape` laid end to end
// (plan_micro_batch), estimated on as many of them as span 4 tiles (at least two: one sample
// boundary, where packing misaligns the blocks with the tiles), so that ranking hundreds of
// configurations of a 28k-token preset stays quick while samples shorter than a tile, which
// share its work, are counted as the kernels compute them.
ComputedAttention computed_attention(const ModelConfig& cfg, int samples, const PlanSample& shape,
                                     const TilePadding& padding = {});

}  // namespace emb
