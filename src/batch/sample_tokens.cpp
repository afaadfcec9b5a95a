#include "batch/sample_tokens.hpp"

namespace emb {
namespace {

void push(PackedBatch& b, int32_t seq, int32_t kind, int32_t blk, int32_t grp, int32_t f, int32_t h, int32_t w) {
  b.seq.push_back(seq), b.kind.push_back(kind), b.blk.push_back(blk), b.grp.push_back(grp);
  b.pos.insert(b.pos.end(), {f, h, w});
}

}  // namespace


int sample_blocks(const TokenConfig& cfg, int latent_frames) {
  return (latent_frames + cfg.frames_per_block - 1) / cfg.frames_per_block;
}

int64_t sample_query_tokens(const TokenConfig& cfg, int latent_frames) {
  if (cfg.family == Family::gr00t) return 1 + cfg.n_future + cfg.horizon;
  const int64_t per_frame = int64_t(cfg.latent_height / cfg.patch[1]) * (cfg.latent_width / cfg.patch[2]);
  return 2 * (latent_frames / cfg.patch[0]) * per_frame + int64_t(sample_blocks(cfg, latent_frames)) * cfg.actions_per_block;
}

void append_sample_tokens(const TokenConfig& cfg, int latent_frames, int32_t slot, PackedBatch& b) {
  if (cfg.family == Family::gr00t) {
    int32_t i = 0;
    push(b, slot, kState, 0, 1, i++, 0, 0);
    for (int k = 0; k < cfg.n_future; ++k) push(b, slot, kFuture, 0, 1, i++, 0, 0);
    for (int k = 0; k < cfg.horizon; ++k) push(b, slot, kAction, 0, 1, i++, 0, 0);
    return;
  }
  const int pt = cfg.patch[0], ft = latent_frames / pt;
  const int hp = cfg.latent_height / cfg.patch[1], wp = cfg.latent_width / cfg.patch[2];
  for (int32_t grp = 0; grp < 2; ++grp)
    for (int f = 0; f < ft; ++f)
      for (int h = 0; h < hp; ++h)
        for (int w = 0; w < wp; ++w) push(b, slot, grp ? kNoisyVideo : kClean, f * pt / cfg.frames_per_block, grp, f, h, w);
  const int blocks = sample_blocks(cfg, latent_frames);
  for (int blk = 0; blk < blocks; ++blk)
    for (int i = 0; i < cfg.actions_per_block; ++i)  // 1d RoPE position b·Ha + i (upstream's action register)
      push(b, slot, kAction, blk, 1, blk * cfg.actions_per_block + i, 0, 0);
}

void append_padding_tokens(int64_t n, PackedBatch& b) {
  for (int64_t k = 0; k < n; ++k) push(b, -1, kPad, 0, 0, 0, 0, 0);
}

}  // namespace emb
