#include "plan/computed_attention.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/attention_tiles.hpp"
#include "model/dit_block.hpp"
#include "model/self_mask.hpp"

namespace emb {
namespace {

constexpr int64_t kSpannedTiles = 4;

// Query-key pairs of the tiles that hold an allowed pair (computed whole), and of those the
// masked tiles' (the mask decided per pair).
struct TilePairs {
  int64_t computed = 0, masked = 0;
};

TilePairs tile_pairs(const AttnIndex& idx, int64_t Tq, int64_t Tk) {
  if (Tq == 0 || Tk == 0) return {};
  const AttnTiles tiles(idx, Tq, Tk);
  const int64_t masked = tiles.pairs(TileKind::masked);
  return {tiles.pairs(TileKind::dense) + masked, masked};
}

}  // namespace

ComputedAttention computed_attention(const ModelConfig& c, int samples_per_mb, const PlanSample& shape) {
  // Short samples share tiles: a 64-token tile of 13-token samples computes the pairs of five
  // of them, so the estimate needs the samples that span a few tiles of both axes; long ones
  // need one sample boundary.
  const std::shared_ptr<const PackedBatch> one_sample = plan_batch(c, 1, shape);
  const PackedBatch& one = *one_sample;
  const int64_t shortest = std::max<int64_t>(1, one.n_context > 0 ? std::min(one.n_tokens, one.n_context) : one.n_tokens);
  const int64_t spanning = (kSpannedTiles * kAttnTileQ + shortest - 1) / shortest + 1;
  const int samples = int(std::min<int64_t>(samples_per_mb, std::max<int64_t>(2, spanning)));
  const std::shared_ptr<const PackedBatch> batch = plan_batch(c, samples, shape);
  const PackedBatch& b = *batch;
  const int32_t* seq = b.seq.data();
  const int32_t* cseq = b.cseq.data();
  const TilePairs self = tile_pairs({dit_self_mask(c), seq, b.blk.data(), b.grp.data(), seq, b.blk.data(), b.grp.data(),
                                     teacher_forcing_of(c)},
                                    b.n_tokens, b.n_tokens);
  const TilePairs cross =
      tile_pairs({AttnMask::cross, seq, nullptr, nullptr, cseq, nullptr, nullptr, {}}, b.n_tokens, b.n_context);
  TilePairs context, image;
  if (c.family == Family::gr00t)  // the vision-language blocks: the context attends to itself
    context = tile_pairs({AttnMask::full, cseq, nullptr, nullptr, cseq, nullptr, nullptr, {}}, b.n_context, b.n_context);
  if (c.clip_tokens > 0) {  // the CLIP image context: each sample's clip_tokens rows
    std::vector<int32_t> clip_seq;
    for (int32_t s = 0; s < b.n_samples; ++s) clip_seq.insert(clip_seq.end(), size_t(c.clip_tokens), s);
    image = tile_pairs({AttnMask::cross, seq, nullptr, nullptr, clip_seq.data(), nullptr, nullptr, {}}, b.n_tokens,
                       int64_t(clip_seq.size()));
  }
  StepFlops all, masked;
  all.self_pairs = self.computed, all.cross_pairs = cross.computed, all.context_pairs = context.computed;
  all.image_pairs = image.computed;
  masked.self_pairs = self.masked, masked.cross_pairs = cross.masked, masked.context_pairs = context.masked;
  masked.image_pairs = image.masked;
  attention_work(c, all);
  attention_work(c, masked);
  return {all.attn_fwd / samples, all.attn_pair_heads / samples, masked.attn_pair_heads / samples};
}

}  // namespace emb
