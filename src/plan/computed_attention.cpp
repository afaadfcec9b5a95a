#include "plan/computed_attention.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels/attention_tiles.hpp"
#include "model/dit_block.hpp"
#include "model/self_mask.hpp"

namespace emb {
namespace {

constexpr int64_t kSpannedTiles = 4;

// Query-key pairs of the tiles that hold an allowed pair (computed whole), and of those the
// masked tiles' (the mask decided per pair), each tile as the full tile's pairs that cost what
// it does.
struct TilePairs {
  double computed = 0, masked = 0;
};

TilePairs tile_pairs(const AttnIndex& idx, int64_t Tq, int64_t Tk, const TilePadding& padding) {
  if (Tq == 0 || Tk == 0) return {};
  const AttnTiles tiles(idx, Tq, Tk);
  const double full_tile = double(kAttnTileQ) * kAttnTileK;
  const double per_padded_pair = full_tile / ((kAttnTileQ + padding.rows) * (kAttnTileK + padding.keys));
  TilePairs p;
  for (int64_t qt = 0; qt < tiles.n_q(); ++qt)
    for (int64_t kt = 0; kt < tiles.n_k(); ++kt) {
      const TileKind kind = tiles.kind(qt, kt);
      if (kind == TileKind::skip) continue;
      const double rows = double(tiles.q(qt).end - tiles.q(qt).begin);
      const double keys = double(tiles.k(kt).end - tiles.k(kt).begin);
      const double pairs = (rows + padding.rows) * (keys + padding.keys) * per_padded_pair;
      p.computed += pairs;
      if (kind == TileKind::masked) p.masked += pairs;
    }
  return p;
}

}  // namespace

ComputedAttention computed_attention(const ModelConfig& c, int samples_per_mb, const PlanSample& shape,
                                     const TilePadding& padding) {
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
                                    b.n_tokens, b.n_tokens, padding);
  const TilePairs cross = tile_pairs({AttnMask::cross, seq, nullptr, nullptr, cseq, nullptr, nullptr, {}}, b.n_tokens,
                                     b.n_context, padding);
  TilePairs context, image;
  if (c.family == Family::gr00t)  // the vision-language blocks: the context attends to itself
    context = tile_pairs({AttnMask::full, cseq, nullptr, nullptr, cseq, nullptr, nullptr, {}}, b.n_context, b.n_context,
                         padding);
  if (c.clip_tokens > 0) {  // the CLIP image context: each sample's clip_tokens rows
    std::vector<int32_t> clip_seq;
    for (int32_t s = 0; s < b.n_samples; ++s) clip_seq.insert(clip_seq.end(), size_t(c.clip_tokens), s);
    image = tile_pairs({AttnMask::cross, seq, nullptr, nullptr, clip_seq.data(), nullptr, nullptr, {}}, b.n_tokens,
                       int64_t(clip_seq.size()), padding);
  }
  StepFlops all, masked;  // pairs to the nearest (a padded tile's are fractional)
  all.self_pairs = std::llround(self.computed), all.cross_pairs = std::llround(cross.computed);
  all.context_pairs = std::llround(context.computed), all.image_pairs = std::llround(image.computed);
  masked.self_pairs = std::llround(self.masked), masked.cross_pairs = std::llround(cross.masked);
  masked.context_pairs = std::llround(context.masked), masked.image_pairs = std::llround(image.masked);
  attention_work(c, all);
  attention_work(c, masked);
  return {all.attn_fwd / samples, all.attn_pair_heads / samples, masked.attn_pair_heads / samples};
}

}  // namespace emb
