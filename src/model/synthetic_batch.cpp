#include "model/synthetic_batch.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace emb {
namespace {

int n_blocks(const ModelConfig& cfg, int latent_frames) {
  return (latent_frames + cfg.frames_per_block - 1) / cfg.frames_per_block;
}

// One sample's query tokens appended to the batch (token arrays only).
void append_tokens(const ModelConfig& cfg, const SampleShape& shape, int32_t slot, PackedBatch& b) {
  auto push = [&](int32_t kind, int32_t blk, int32_t grp, int32_t f, int32_t h, int32_t w) {
    b.seq.push_back(slot), b.kind.push_back(kind), b.blk.push_back(blk), b.grp.push_back(grp);
    b.pos.insert(b.pos.end(), {f, h, w});
  };
  if (cfg.family == Family::gr00t) {
    int32_t i = 0;
    push(kState, 0, 1, i++, 0, 0);
    for (int k = 0; k < cfg.n_future; ++k) push(kFuture, 0, 1, i++, 0, 0);
    for (int k = 0; k < cfg.horizon; ++k) push(kAction, 0, 1, i++, 0, 0);
    return;
  }
  const int pt = cfg.patch[0], ft = shape.latent_frames / pt;
  const int hp = cfg.latent_height / cfg.patch[1], wp = cfg.latent_width / cfg.patch[2];
  for (int32_t grp = 0; grp < 2; ++grp)
    for (int f = 0; f < ft; ++f)
      for (int h = 0; h < hp; ++h)
        for (int w = 0; w < wp; ++w) push(grp ? kNoisyVideo : kClean, f * pt / cfg.frames_per_block, grp, f, h, w);
  const int nb = n_blocks(cfg, shape.latent_frames);
  for (int j = 0; j < nb * cfg.actions_per_block; ++j) {
    const int blk = j / cfg.actions_per_block;
    push(kAction, blk, 1, blk * cfg.frames_per_block / pt, 0, j % cfg.actions_per_block);
  }
}

void fill_normal(std::vector<float>& out, size_t n, const CounterRng& rng, uint64_t first) {
  for (size_t i = 0; i < n; ++i) out.push_back(float(rng.normal(first + i)));
}

// Sample content: everything drawn from (seed, synth, sample id), so it never depends on packing.
void append_content(const ModelConfig& cfg, const SampleShape& shape, int64_t id, uint64_t seed, int64_t n_tokens,
                    const int32_t* kinds, PackedBatch& b) {
  const CounterRng rng(seed, RngStream::synth, uint64_t(id));
  fill_normal(b.context, size_t(shape.n_context) * size_t(cfg.d_ctx), rng, 0);
  const uint64_t base = uint64_t(1) << 32;
  if (cfg.family == Family::gr00t) {
    const size_t n_act = size_t(cfg.horizon) * size_t(cfg.action_dim);
    fill_normal(b.state, size_t(cfg.state_dim), rng, base);
    fill_normal(b.actions, n_act, rng, 2 * base);
    // Masked tail: the last action steps of some samples are padding (DATA.md "Samples").
    const int valid = cfg.horizon - int(rng.bits(3 * base) % uint32_t(std::max(1, cfg.horizon / 2)));
    for (int h = 0; h < cfg.horizon; ++h)
      for (int k = 0; k < cfg.action_dim; ++k) b.action_mask.push_back(h < valid ? 1.0f : 0.0f);
    b.emb_id.push_back(int32_t(rng.bits(3 * base + 1) % uint32_t(cfg.n_embodiments)));
    return;
  }
  // A noisy video token carries the x0 of its clean twin: the clean tokens come first.
  const int P = cfg.patch_dim_in();
  int64_t n_clean = 0, n_act = 0;
  for (int64_t t = 0; t < n_tokens; ++t) n_clean += kinds[t] == kClean, n_act += kinds[t] == kAction;
  std::vector<float> x0;
  fill_normal(x0, size_t(n_clean * P), rng, base);
  b.video_x0.insert(b.video_x0.end(), x0.begin(), x0.end());
  b.video_x0.insert(b.video_x0.end(), x0.begin(), x0.end());
  fill_normal(b.act_x0, size_t(n_act * cfg.action_dim), rng, 2 * base);
}

}  // namespace

SampleShape synthetic_sample_shape(const ModelConfig& cfg, uint64_t seed, int64_t sample_id) {
  const CounterRng rng(seed, RngStream::synth, uint64_t(sample_id), 1);
  SampleShape s;
  if (cfg.family == Family::gr00t) {
    s.n_context = 4 + int(rng.bits(0) % 13);
    return s;
  }
  s.n_context = 1 + int(rng.bits(0) % uint32_t(cfg.max_text_tokens));
  s.latent_frames = cfg.latent_frames;
  const int shorter = cfg.latent_frames - cfg.patch[0];
  if (rng.bits(1) % 2 && shorter > 0 && (n_blocks(cfg, shorter) >= 2 || n_blocks(cfg, cfg.latent_frames) < 2))
    s.latent_frames = shorter;
  return s;
}

SampleShape typical_sample_shape(const ModelConfig& cfg) {
  SampleShape s;
  if (cfg.family == Family::gr00t) {
    s.n_context = 2 * 64 + 40;
  } else {
    s.n_context = cfg.max_text_tokens;
    s.latent_frames = cfg.latent_frames;
  }
  return s;
}

PackedBatch make_batch(const ModelConfig& cfg, const std::vector<int64_t>& ids, const std::vector<SampleShape>& shapes,
                       bool packed, uint64_t seed, bool with_content) {
  EMB_ASSERT(ids.size() == shapes.size());
  PackedBatch b;
  b.family = family_name(cfg.family);
  b.n_samples = int32_t(ids.size());
  b.sample_id = ids;
  std::vector<PackedBatch> per_sample(ids.size());
  int64_t longest = 0, longest_ctx = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    append_tokens(cfg, shapes[i], int32_t(i), per_sample[i]);
    longest = std::max<int64_t>(longest, int64_t(per_sample[i].seq.size()));
    longest_ctx = std::max<int64_t>(longest_ctx, shapes[i].n_context);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const PackedBatch& s = per_sample[i];
    const int64_t n = int64_t(s.seq.size());
    b.seq.insert(b.seq.end(), s.seq.begin(), s.seq.end());
    b.kind.insert(b.kind.end(), s.kind.begin(), s.kind.end());
    b.blk.insert(b.blk.end(), s.blk.begin(), s.blk.end());
    b.grp.insert(b.grp.end(), s.grp.begin(), s.grp.end());
    b.pos.insert(b.pos.end(), s.pos.begin(), s.pos.end());
    b.cseq.insert(b.cseq.end(), size_t(shapes[i].n_context), int32_t(i));
    b.n_real_tokens += n + shapes[i].n_context;
    if (with_content) append_content(cfg, shapes[i], ids[i], seed, n, s.kind.data(), b);
    if (!packed) {
      const int64_t pad = longest - n, pad_ctx = longest_ctx - shapes[i].n_context;
      b.seq.insert(b.seq.end(), size_t(pad), -1);
      b.kind.insert(b.kind.end(), size_t(pad), kPad);
      b.blk.insert(b.blk.end(), size_t(pad), 0);
      b.grp.insert(b.grp.end(), size_t(pad), 0);
      b.pos.insert(b.pos.end(), size_t(3 * pad), 0);
      b.cseq.insert(b.cseq.end(), size_t(pad_ctx), -1);
      if (with_content) b.context.insert(b.context.end(), size_t(pad_ctx * cfg.d_ctx), 0.0f);
    }
  }
  b.n_tokens = int64_t(b.seq.size());
  b.n_context = int64_t(b.cseq.size());
  return b;
}

PackedBatch make_synthetic_batch(const ModelConfig& cfg, const std::vector<int64_t>& ids, bool packed, uint64_t seed) {
  std::vector<SampleShape> shapes;
  for (int64_t id : ids) shapes.push_back(synthetic_sample_shape(cfg, seed, id));
  return make_batch(cfg, ids, shapes, packed, seed, true);
}

}  // namespace emb
