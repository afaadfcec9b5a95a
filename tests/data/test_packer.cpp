#define BOOST_TEST_MODULE data_packer
#include <boost/test/unit_test.hpp>

#include <map>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "batch/sample_tokens.hpp"
#include "data/packer.hpp"
#include "data_fixtures.hpp"

using namespace emb;

namespace {

// gr00t samples with context lengths drawn like the synthetic mix (13..72 tokens).
std::vector<Sample> gr00t_samples(const ModelConfig& cfg, int n) {
  std::vector<Sample> out;
  CounterRng rng(3, RngStream::test, 0);
  for (int i = 0; i < n; ++i) {
    Sample s;
    s.id = 100 + i, s.row = i, s.emb_id = i % 3;
    s.query_tokens = 1 + cfg.n_future + cfg.horizon;
    s.context_tokens = 13 + rng.bits(uint64_t(i)) % 60;
    s.context.assign(size_t(s.context_tokens * cfg.d_ctx), float(i));
    s.state.assign(size_t(cfg.state_dim), float(i));
    s.actions.assign(size_t(cfg.horizon * cfg.action_dim), float(i));
    s.action_mask.assign(s.actions.size(), 1.f);
    out.push_back(s);
  }
  return out;
}

std::vector<int64_t> ids_of(const std::vector<PackedBatch>& batches) {
  std::vector<int64_t> ids;
  for (const PackedBatch& b : batches) ids.insert(ids.end(), b.sample_id.begin(), b.sample_id.end());
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

BOOST_AUTO_TEST_CASE(packed_respects_budget_and_keeps_every_sample_once) {
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  std::vector<Sample> samples = gr00t_samples(cfg, 97);
  for (int64_t lookahead : {0, 1, 8, 64}) {
    PackerConfig p;
    p.tokens_per_mb = 200, p.lookahead = lookahead;
    std::vector<PackedBatch> batches = pack_step(samples, cfg, p, {"f.h5"});
    for (const PackedBatch& b : batches) {
      BOOST_TEST(b.n_tokens + b.n_context <= p.tokens_per_mb);
      BOOST_TEST(b.n_real_tokens == b.n_tokens + b.n_context);  // no padding when packed
      for (int32_t s : b.seq) BOOST_TEST((s >= 0 && s < b.n_samples));
    }
    std::vector<int64_t> ids = ids_of(batches);
    BOOST_TEST(ids.size() == samples.size());
    for (size_t i = 0; i < ids.size(); ++i) BOOST_TEST(ids[i] == samples[i].id);
  }
}

BOOST_AUTO_TEST_CASE(packed_and_padded_carry_the_same_samples) {
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  std::vector<Sample> samples = gr00t_samples(cfg, 40);
  PackerConfig packed, padded;
  packed.tokens_per_mb = padded.tokens_per_mb = 400;
  padded.packing = false, padded.pad_query = samples[0].query_tokens, padded.pad_context = 72;
  std::vector<PackedBatch> a = pack_step(samples, cfg, packed, {"f.h5"}), b = pack_step(samples, cfg, padded, {"f.h5"});
  BOOST_TEST(ids_of(a) == ids_of(b));
  int64_t real_a = 0, real_b = 0, computed_a = 0, computed_b = 0;
  for (const PackedBatch& x : a) real_a += x.n_real_tokens, computed_a += x.n_tokens + x.n_context;
  for (const PackedBatch& x : b) {
    real_b += x.n_real_tokens, computed_b += x.n_tokens + x.n_context;
    BOOST_TEST(x.n_context == int64_t(x.n_samples) * 72);
    for (int64_t k = 0; k < x.n_context; ++k)
      if (x.cseq[k] < 0) BOOST_TEST(x.context[size_t(k * cfg.d_ctx)] == 0.f);
  }
  BOOST_TEST(real_a == real_b);
  BOOST_TEST(computed_a == real_a);
  BOOST_TEST(computed_b > computed_a);
  // Per-sample content is identical: the same state rows for the same ids.
  std::map<int64_t, float> state_a, state_b;
  for (const PackedBatch& x : a)
    for (int i = 0; i < x.n_samples; ++i) state_a[x.sample_id[i]] = x.state[size_t(i * cfg.state_dim)];
  for (const PackedBatch& x : b)
    for (int i = 0; i < x.n_samples; ++i) state_b[x.sample_id[i]] = x.state[size_t(i * cfg.state_dim)];
  BOOST_TEST((state_a == state_b));
}

BOOST_AUTO_TEST_CASE(oversized_sample_is_an_error_naming_it) {
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  std::vector<Sample> samples = gr00t_samples(cfg, 5);
  PackerConfig p;
  p.tokens_per_mb = 50;
  try {
    pack_step(samples, cfg, p, {"data.h5"});
    BOOST_FAIL("expected an error");
  } catch (const Error& e) {
    std::string m = e.what();
    BOOST_TEST(m.find("data.h5: sample ") == 0);
    BOOST_TEST(m.find("tokens_per_mb = 50") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(gr00t_token_layout) {
  ModelConfig cfg = test::tiny_model(Family::gr00t);
  std::vector<Sample> samples = gr00t_samples(cfg, 2);
  PackerConfig p;
  p.tokens_per_mb = 1000;
  std::vector<PackedBatch> batches = pack_step(samples, cfg, p, {"f.h5"});
  BOOST_TEST(batches.size() == 1u);
  const PackedBatch& b = batches[0];
  int64_t q = 1 + cfg.n_future + cfg.horizon;
  BOOST_TEST(b.n_tokens == 2 * q);
  for (int64_t i = 0; i < b.n_tokens; ++i) {
    int64_t k = i % q;
    BOOST_TEST(b.seq[i] == int32_t(i / q));
    BOOST_TEST(b.grp[i] == 1);
    BOOST_TEST(b.blk[i] == 0);
    BOOST_TEST(b.kind[i] == (k == 0 ? kState : k <= cfg.n_future ? kFuture : kAction));
    BOOST_TEST(b.pos[size_t(3 * i)] == int32_t(k));
  }
  BOOST_TEST(b.n_context == samples[0].context_tokens + samples[1].context_tokens);
  BOOST_TEST(b.cseq.back() == 1);
}

BOOST_AUTO_TEST_CASE(wan_token_layout_and_patches) {
  ModelConfig cfg = test::tiny_model(Family::wan);
  Sample s;
  s.id = 7, s.query_tokens = sample_query_tokens(cfg, cfg.latent_frames), s.context_tokens = 3;
  s.context.assign(size_t(3 * cfg.d_ctx), 1.f);
  int F = cfg.latent_frames, H = cfg.latent_height, W = cfg.latent_width, C = cfg.latent_channels;
  for (int i = 0; i < F * H * W * C; ++i) s.latents.push_back(float(i));
  s.latent_channels = C;
  int blocks = (F + cfg.frames_per_block - 1) / cfg.frames_per_block;
  s.block_actions.assign(size_t(blocks * cfg.actions_per_block * cfg.action_dim), 2.f);
  PackerConfig p;
  p.tokens_per_mb = 1000;
  PackedBatch b = pack_step({s}, cfg, p, {"f.h5"})[0];
  int hw = (H / 2) * (W / 2), video = F * hw;
  BOOST_TEST(b.n_tokens == 2 * video + blocks * cfg.actions_per_block);
  BOOST_TEST(b.video_x0.size() == size_t(2 * video * 4 * C));
  for (int i = 0; i < b.n_tokens; ++i) {
    if (i < 2 * video) {
      int v = i % video, f = v / hw, h = (v % hw) / (W / 2), w = v % (W / 2);
      BOOST_TEST(b.grp[i] == (i < video ? 0 : 1));
      BOOST_TEST(b.kind[i] == (i < video ? kClean : kNoisyVideo));
      BOOST_TEST(b.blk[i] == f / cfg.frames_per_block);
      BOOST_TEST((b.pos[3 * i] == f && b.pos[3 * i + 1] == h && b.pos[3 * i + 2] == w));
      // Patch element (dt=0, dh=1, dw=0, c=1) of token i: latent[f, 2h+1, 2w, 1].
      float want = float(((f * H + 2 * h + 1) * W + 2 * w) * C + 1);
      BOOST_TEST(b.video_x0[size_t(i) * 4 * C + 2 * C + 1] == want);
    } else {
      int a = i - 2 * video;
      BOOST_TEST(b.kind[i] == kAction);
      BOOST_TEST(b.blk[i] == a / cfg.actions_per_block);
      BOOST_TEST((b.pos[3 * i] == a && b.pos[3 * i + 1] == 0 && b.pos[3 * i + 2] == 0));  // MODEL.md (b·Ha + i, 0, 0)
    }
  }
}

// The DreamZero layout: a sample's latents carry the file's channels [latents C | y Cy]; the
// packer splits them per patch pixel, x0 to video_x0 and y to video_cond, both (kh, kw, c) with c
// fastest, and a noisy token carries its clean twin's rows.
BOOST_AUTO_TEST_CASE(dreamzero_y_channels_go_to_video_cond) {
  ModelConfig cfg = test::tiny_model(Family::wan);
  cfg.cond_channels = 3, cfg.clip_tokens = 2, cfg.d_clip = 4;
  const int F = cfg.latent_frames, H = cfg.latent_height, W = cfg.latent_width, C = cfg.latent_channels;
  const int Cy = cfg.cond_channels, Cs = C + Cy, pix = cfg.patch_pixels();
  Sample s;
  s.id = 3, s.query_tokens = sample_query_tokens(cfg, F), s.context_tokens = 2, s.dreamzero = true;
  s.context.assign(size_t(2 * cfg.d_ctx), 1.f);
  s.latent_channels = Cs;
  for (int i = 0; i < F * H * W * Cs; ++i) s.latents.push_back(float(i));
  const int blocks = sample_blocks(cfg, F);
  s.block_actions.assign(size_t(blocks * cfg.actions_per_block * cfg.action_dim), 0.5f);
  s.act_mask.assign(s.block_actions.size(), 1.f);
  s.state.assign(size_t(blocks * cfg.states_per_block * cfg.state_dim), 0.25f);
  s.clip.assign(size_t(cfg.clip_tokens * cfg.d_clip), 0.75f);
  s.has_real_action = 1.f;
  PackerConfig p;
  p.tokens_per_mb = 4096;
  const PackedBatch b = pack_step({s}, cfg, p, {"f.h5"})[0];
  const int wp = W / 2, video = F * (H / 2) * wp;
  BOOST_REQUIRE(b.video_x0.size() == size_t(2 * video * pix * C));
  BOOST_REQUIRE(b.video_cond.size() == size_t(2 * video * pix * Cy));
  for (int i = 0; i < 2 * video; ++i) {
    const int v = i % video, f = v / (video / F), h = (v % (video / F)) / wp, w = v % wp;
    for (int kh = 0; kh < 2; ++kh)
      for (int kw = 0; kw < 2; ++kw) {
        const float first = float(((f * H + 2 * h + kh) * W + 2 * w + kw) * Cs);  // the pixel's channel 0
        const size_t px = size_t(i * pix + kh * 2 + kw);
        for (int c = 0; c < C; ++c) BOOST_TEST(b.video_x0[px * C + c] == first + c);
        for (int c = 0; c < Cy; ++c) BOOST_TEST(b.video_cond[px * Cy + c] == first + C + c);
      }
  }
  BOOST_TEST(b.clip.size() == size_t(cfg.clip_tokens * cfg.d_clip));
  BOOST_TEST(b.has_real_action == std::vector<float>{1.f});
}
