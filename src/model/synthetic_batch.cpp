#include "model/synthetic_batch.hpp"

#include <algorithm>

#include "batch/sample_tokens.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

namespace emb {
namespace {

void fill_normal(std::vector<float>& out, size_t n, const CounterRng& rng, uint64_t first) {
  const size_t at = out.size();
  out.resize(at + n);
  rng.normals(first, int64_t(n), out.data() + at);
}

// DreamZero's conditioning of one sample (UPSTREAM.md "DreamZero"), drawn at counter `first` on:
// per clean video token (x0 its latents [pixels·C], f its latent frame) the I2V y channels per
// patch pixel [mask 4 | image latents C]: mask 1 and the token's own latents on frame 0, mask 0
// and a draw elsewhere (VAE latents of the zero frames); the CLIP rows; the action mask, the
// last action dims of some samples padding; has_real_action 0 for about one sample in four.
void append_dreamzero_conditioning(const ModelConfig& cfg, const CounterRng& rng, uint64_t first,
                                   const std::vector<float>& x0, const std::vector<int32_t>& frames, int64_t n_act,
                                   std::vector<float>& cond, PackedBatch& b) {
  const int C = cfg.latent_channels, Cm = cfg.cond_channels - C, pix = cfg.patch_pixels();
  uint64_t draw = first;
  for (size_t t = 0; t < frames.size() && cfg.cond_channels > 0; ++t)
    for (int p = 0; p < pix; ++p) {
      for (int m = 0; m < Cm; ++m) cond.push_back(frames[t] == 0 ? 1.0f : 0.0f);
      for (int c = 0; c < C; ++c)
        cond.push_back(frames[t] == 0 ? x0[(t * size_t(pix) + size_t(p)) * size_t(C) + size_t(c)]
                                      : float(rng.normal(draw++)));
    }
  if (cfg.clip_tokens > 0) fill_normal(b.clip, size_t(cfg.clip_tokens) * size_t(cfg.d_clip), rng, first + (1u << 30));
  const int real_dims = cfg.action_dim - int(rng.bits(first + (2u << 30)) % uint32_t(cfg.action_dim / 4 + 1));
  for (int64_t j = 0; j < n_act; ++j)
    for (int k = 0; k < cfg.action_dim; ++k) b.act_mask.push_back(k < real_dims ? 1.0f : 0.0f);
  b.has_real_action.push_back(rng.bits(first + (2u << 30) + 1) % 4 == 0 ? 0.0f : 1.0f);
}

// Sample content: everything drawn from (seed, synth, sample id), so it never depends on packing.
void append_content(const ModelConfig& cfg, const SampleShape& shape, int64_t id, uint64_t seed, int64_t n_tokens,
                    const int32_t* kinds, const int32_t* pos, PackedBatch& b) {
  const CounterRng rng(seed, RngStream::synth, uint64_t(id));
  fill_normal(b.context, size_t(shape.n_context) * size_t(cfg.d_ctx), rng, 0);
  const int64_t pad = sample_context_tokens(cfg, shape.n_context) - shape.n_context;  // wan's text_len rows
  b.context.insert(b.context.end(), size_t(pad * cfg.d_ctx), 0.0f);
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
  int64_t n_clean = 0, n_act = 0, n_state = 0;
  for (int64_t t = 0; t < n_tokens; ++t)
    n_clean += kinds[t] == kClean, n_act += kinds[t] == kAction, n_state += kinds[t] == kState;
  std::vector<float> x0;
  fill_normal(x0, size_t(n_clean * P), rng, base);
  b.video_x0.insert(b.video_x0.end(), x0.begin(), x0.end());
  b.video_x0.insert(b.video_x0.end(), x0.begin(), x0.end());
  // Upstream's actions are normalised to [-1, 1] (its action head rejects others).
  for (size_t i = 0; i < size_t(n_act * cfg.action_dim); ++i) b.act_x0.push_back(float(2 * rng.uniform(2 * base + i) - 1));
  fill_normal(b.state, size_t(n_state * cfg.state_dim), rng, 3 * base);
  if (!cfg.first_frame_block) return;
  std::vector<int32_t> frames;
  for (int64_t t = 0; t < n_tokens; ++t)
    if (kinds[t] == kClean) frames.push_back(pos[3 * t]);
  std::vector<float> cond;
  append_dreamzero_conditioning(cfg, rng, 4 * base, x0, frames, n_act, cond, b);
  b.video_cond.insert(b.video_cond.end(), cond.begin(), cond.end());  // the noisy twins carry the same
  b.video_cond.insert(b.video_cond.end(), cond.begin(), cond.end());
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
  const int shorter = cfg.latent_frames - (cfg.first_frame_block ? cfg.frames_per_block : cfg.patch[0]);
  if (rng.bits(1) % 2 && shorter > 0 && (sample_blocks(cfg, shorter) >= 2 || sample_blocks(cfg, cfg.latent_frames) < 2))
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
  int64_t longest = 0, longest_ctx = 0;
  for (const SampleShape& shape : shapes) {
    longest = std::max(longest, sample_query_tokens(cfg, shape.latent_frames));
    longest_ctx = std::max<int64_t>(longest_ctx, sample_context_tokens(cfg, shape.n_context));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t first = int64_t(b.seq.size());
    append_sample_tokens(cfg, shapes[i].latent_frames, int32_t(i), b);
    const int64_t n = int64_t(b.seq.size()) - first;
    const int64_t n_context = sample_context_tokens(cfg, shapes[i].n_context);
    b.cseq.insert(b.cseq.end(), size_t(n_context), int32_t(i));
    b.n_real_tokens += n + n_context;
    if (with_content)
      append_content(cfg, shapes[i], ids[i], seed, n, b.kind.data() + first, b.pos.data() + 3 * first, b);
    if (!packed) {
      const int64_t pad_ctx = longest_ctx - n_context;
      append_padding_tokens(longest - n, b);
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
