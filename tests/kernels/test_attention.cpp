#include <boost/test/unit_test.hpp>
#include <omp.h>

#include <cfloat>
#include <cmath>

#include "core/error.hpp"
#include "kernel_check.hpp"
#include "kernels/cpu/attention.hpp"
#include "kernels/cpu/attention_tile_masks.hpp"

using namespace emb;
using namespace emb::test;
using cpu::AttnMask;

namespace {

// A ragged packed batch: samples laid end to end with padding tokens (seq −1) after some of
// them, plus a context with its own padding. `shuffled` draws grp/blk per token at random
// (the tile summaries must stay exact for any layout); otherwise each sample is clean blocks
// then noisy blocks, as the wan sequences are.
struct Batch {
  std::vector<int32_t> seq, blk, grp, cseq;
  // DreamZero batches (dreamzero_batch): each token's position within its sample, the samples'
  // shapes and the teacher-forcing parameters.
  struct Sample {
    int blocks, frame_tokens, actions, states;  // nb, fs, Ha, Ns
  };
  std::vector<int32_t> pos_in_sample;
  std::vector<Sample> samples;
  TeacherForcing tf;
  int max_chunk = 0;
  int64_t T() const { return static_cast<int64_t>(seq.size()); }
  int64_t Tc() const { return static_cast<int64_t>(cseq.size()); }
  cpu::AttnIndex index(AttnMask mask) const {
    cpu::AttnIndex idx;
    idx.mask = mask;
    idx.q_seq = seq.data(), idx.q_blk = blk.data(), idx.q_grp = grp.data();
    idx.k_seq = mask == AttnMask::cross ? cseq.data() : seq.data();
    idx.k_blk = blk.data(), idx.k_grp = grp.data();
    idx.tf = tf;
    return idx;
  }
};

Batch make_batch(const std::vector<int>& lengths, const std::vector<int>& padding_after, int n_blocks,
                 bool shuffled) {
  Batch b;
  std::mt19937 gen(7);
  for (size_t s = 0; s < lengths.size(); ++s) {
    const int n = lengths[s], half = std::max(1, n / 2);
    for (int t = 0; t < n; ++t) {
      b.seq.push_back(int32_t(s));
      if (shuffled) {
        b.grp.push_back(int32_t(gen() % 2));
        b.blk.push_back(int32_t(gen() % n_blocks));
      } else {
        b.grp.push_back(t >= half);
        b.blk.push_back(int32_t((t % half) * n_blocks / half));
      }
    }
    for (int p = 0; p < padding_after[s]; ++p) b.seq.push_back(-1), b.grp.push_back(0), b.blk.push_back(0);
    for (int c = 0; c < 3 + n / 5; ++c) b.cseq.push_back(int32_t(s));
  }
  b.cseq.push_back(-1);
  return b;
}

Batch ragged_batch(bool shuffled) { return make_batch({37, 90, 5, 130, 71}, {0, 3, 0, 0, 2}, 3, shuffled); }

// DreamZero samples laid end to end (padding after some): per sample [clean video F·fs][noisy
// video F·fs][actions nb·Ha][states nb·Ns], F = 1 + nb·fpb, with MODEL.md's encoding: grp 0 clean
// (blk = its frame), 1 noisy and actions, 2 states (blk = the first frame of their block).
Batch dreamzero_batch(const std::vector<Batch::Sample>& samples, const std::vector<int>& padding_after, int fpb,
                      int max_chunk) {
  Batch b;
  b.samples = samples;
  b.max_chunk = max_chunk;
  b.tf = TeacherForcing{fpb, max_chunk * fpb + 1};
  auto push = [&](int32_t s, int32_t grp, int32_t blk, int32_t p) {
    b.seq.push_back(s), b.grp.push_back(grp), b.blk.push_back(blk), b.pos_in_sample.push_back(p);
  };
  for (size_t s = 0; s < samples.size(); ++s) {
    const Batch::Sample& x = samples[s];
    const int frames = 1 + x.blocks * fpb;
    int32_t p = 0;
    for (int grp = 0; grp < 2; ++grp)
      for (int f = 0; f < frames; ++f)
        for (int t = 0; t < x.frame_tokens; ++t) {
          const int32_t first = f == 0 ? 0 : 1 + (f - 1) / fpb * fpb;
          push(int32_t(s), grp, grp == 0 ? f : first, p++);
        }
    for (int grp = 1; grp <= 2; ++grp)
      for (int blk = 0; blk < x.blocks; ++blk)
        for (int t = 0; t < (grp == 1 ? x.actions : x.states); ++t) push(int32_t(s), grp, 1 + blk * fpb, p++);
    for (int pad = 0; pad < padding_after[s]; ++pad) push(-1, 0, 0, 0);
    for (int c = 0; c < 5; ++c) b.cseq.push_back(int32_t(s));
  }
  return b;
}

// Upstream's teacher-forcing mask from token positions (dreamzero CWM 555-784, 907-953; the
// spec's "Self-attention mask M"), written without seq/blk/grp.
bool teacher_forcing_ref(const Batch& b, int64_t i, int64_t j) {
  const Batch::Sample& x = b.samples[size_t(b.seq[i])];
  const int fpb = b.tf.frames_per_block, fs = x.frame_tokens, nb = x.blocks;
  const int64_t nv = int64_t(1 + nb * fpb) * fs, blk = int64_t(fpb) * fs, act0 = 2 * nv, st0 = act0 + nb * x.actions;
  const int64_t qi = b.pos_in_sample[i], kj = b.pos_in_sample[j];
  auto in = [](int64_t v, int64_t lo, int64_t hi) { return v >= lo && v < hi; };
  if (qi < fs) return kj < fs;
  if (qi < nv) {
    const int64_t end = fs + ((qi - fs) / blk + 1) * blk, window = int64_t(b.max_chunk) * fpb + 1;
    return kj < fs || in(kj, std::max<int64_t>(fs, end - window * fs), end);
  }
  if (qi < nv + fs) return in(kj, nv, nv + fs);
  if (qi >= st0) {
    const int64_t s = (qi - st0) / x.states;
    return in(kj, st0 + s * x.states, st0 + (s + 1) * x.states);
  }
  const int64_t bq = qi < act0 ? (qi - nv - fs) / blk : (qi - act0) / x.actions;
  return kj < fs + bq * blk || in(kj, nv + fs + bq * blk, nv + fs + (bq + 1) * blk) ||
         in(kj, act0 + bq * x.actions, act0 + (bq + 1) * x.actions) ||
         in(kj, st0 + bq * x.states, st0 + (bq + 1) * x.states);
}

// The masks of MODEL.md "Packed batch", written independently of the kernels.
bool mask_ref(const Batch& b, AttnMask mask, int64_t i, int64_t j) {
  if (b.seq[i] < 0) return false;
  if (mask == AttnMask::cross) return b.seq[i] == b.cseq[j];
  if (b.seq[i] != b.seq[j]) return false;
  switch (mask) {
    case AttnMask::full:
      return true;
    case AttnMask::prefix:
      return b.grp[j] == 0 || b.grp[i] != 0;
    case AttnMask::block_causal:
      if (b.grp[i] == 0) return b.grp[j] == 0 && b.blk[j] <= b.blk[i];
      return (b.grp[j] == 0 && b.blk[j] < b.blk[i]) || (b.grp[j] != 0 && b.blk[j] == b.blk[i]);
    case AttnMask::teacher_forcing:
      return teacher_forcing_ref(b, i, j);
    default:
      return false;
  }
}

struct AttnRef {
  std::vector<double> out, lse;
};

// Dense masked softmax attention in double.
AttnRef attention_ref(const Batch& b, AttnMask mask, const std::vector<double>& q, const std::vector<double>& k,
                      const std::vector<double>& v, int H, int hd) {
  const int64_t Tq = b.T(), Tk = mask == AttnMask::cross ? b.Tc() : b.T(), ld = int64_t{H} * hd;
  AttnRef r{std::vector<double>(Tq * ld, 0.0), std::vector<double>(Tq * H, -INFINITY)};
  std::vector<double> s(Tk);
  for (int64_t i = 0; i < Tq; ++i)
    for (int h = 0; h < H; ++h) {
      double m = -INFINITY;
      for (int64_t j = 0; j < Tk; ++j) {
        s[j] = -INFINITY;
        if (!mask_ref(b, mask, i, j)) continue;
        double dot = 0.0;
        for (int d = 0; d < hd; ++d) dot += q[i * ld + h * hd + d] * k[j * ld + h * hd + d];
        s[j] = dot / std::sqrt(double(hd));
        m = std::max(m, s[j]);
      }
      if (m == -INFINITY) continue;
      double l = 0.0;
      for (int64_t j = 0; j < Tk; ++j) l += std::exp(s[j] - m);
      for (int64_t j = 0; j < Tk; ++j) {
        const double p = std::exp(s[j] - m) / l;
        if (p == 0.0) continue;
        for (int d = 0; d < hd; ++d) r.out[i * ld + h * hd + d] += p * v[j * ld + h * hd + d];
      }
      r.lse[i * H + h] = m + std::log(l);
    }
  return r;
}

// Numerical gradient of loss() for `count` random entries of x; returns (indices, values).
std::pair<std::vector<size_t>, std::vector<double>> sampled_grad(const std::function<double()>& loss,
                                                                 std::vector<double>& x, int count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<size_t> at;
  std::vector<double> g;
  for (int n = 0; n < count; ++n) {
    const size_t i = gen() % x.size();
    const double keep = x[i], eps = 1e-5;
    x[i] = keep + eps;
    const double up = loss();
    x[i] = keep - eps;
    const double down = loss();
    x[i] = keep;
    at.push_back(i);
    g.push_back((up - down) / (2 * eps));
  }
  return {at, g};
}

// Forward against the dense double reference; backward against central differences of it on
// sampled entries; padding rows get 0 output, lse −∞ and no gradient.
void check_attention(const Batch& b, AttnMask mask, bool with_fd) {
  const int H = 2, hd = 16;
  const int64_t Tq = b.T(), Tk = mask == AttnMask::cross ? b.Tc() : b.T(), ld = H * hd;
  const auto idx = b.index(mask);
  const auto q = random_floats(Tq * ld, 101, -2.f, 2.f), k = random_floats(Tk * ld, 102, -2.f, 2.f);
  const auto v = random_floats(Tk * ld, 103), w_loss = random_floats(Tq * ld, 104);
  std::vector<float> out(Tq * ld), lse(Tq * H);
  cpu::attention_forward(q.data(), k.data(), v.data(), out.data(), lse.data(), Tq, Tk, H, hd, idx);
  auto qd = to_double(q), kd = to_double(k), vd = to_double(v);
  const AttnRef ref = attention_ref(b, mask, qd, kd, vd, H, hd);
  const std::string name = attn_mask_name(mask);
  check_close(out, ref.out, 1e-5, 0.0, name + " out");
  std::vector<double> lse_real, lse_ref_real;
  for (int64_t i = 0; i < Tq * H; ++i) {
    if (b.seq[i / H] < 0) {
      BOOST_TEST(lse[i] == -INFINITY);
      continue;
    }
    lse_real.push_back(lse[i]);
    lse_ref_real.push_back(ref.lse[i]);
  }
  check_close(lse_real, lse_ref_real, 1e-5, 1e-6, name + " lse");

  const auto dq0 = random_floats(q.size(), 105), dk0 = random_floats(k.size(), 106), dv0 = random_floats(v.size(), 107);
  auto dq = dq0, dk = dk0, dv = dv0;
  cpu::attention_backward(q.data(), k.data(), v.data(), out.data(), lse.data(), w_loss.data(), dq.data(), dk.data(),
                          dv.data(), Tq, Tk, H, hd, idx);
  const auto gq = added(dq, dq0), gk = added(dk, dk0), gv = added(dv, dv0);
  for (int64_t i = 0; i < Tq; ++i)
    if (b.seq[i] < 0)
      for (int64_t c = 0; c < ld; ++c) BOOST_REQUIRE(dq[i * ld + c] == dq0[i * ld + c]);
  for (int64_t j = 0; j < Tk; ++j)
    if ((mask == AttnMask::cross ? b.cseq[j] : b.seq[j]) < 0)
      for (int64_t c = 0; c < ld; ++c) BOOST_REQUIRE(dk[j * ld + c] == dk0[j * ld + c] && dv[j * ld + c] == dv0[j * ld + c]);
  if (!with_fd) return;
  auto loss = [&] { return weighted_sum(attention_ref(b, mask, qd, kd, vd, H, hd).out, w_loss); };
  for (auto [x, g, seed, what] : {std::tuple{&qd, &gq, 1u, "dq"}, {&kd, &gk, 2u, "dk"}, {&vd, &gv, 3u, "dv"}}) {
    const auto [at, want] = sampled_grad(loss, *x, 12, seed);
    std::vector<double> got;
    for (size_t i : at) got.push_back((*g)[i]);
    check_close(got, want, 1e-4, 1e-6, name + " " + what);
  }
}

const AttnMask kAllMasks[] = {AttnMask::full, AttnMask::block_causal, AttnMask::prefix, AttnMask::cross};

}  // namespace

BOOST_AUTO_TEST_CASE(attention_mask_rule_matches_model_md) {
  for (bool shuffled : {false, true}) {
    const Batch b = ragged_batch(shuffled);
    for (AttnMask mask : kAllMasks) {
      const auto idx = b.index(mask);
      const int64_t Tk = mask == AttnMask::cross ? b.Tc() : b.T();
      int64_t pairs = 0, mismatches = 0;
      for (int64_t i = 0; i < b.T(); ++i)
        for (int64_t j = 0; j < Tk; ++j) {
          pairs += mask_ref(b, mask, i, j);
          mismatches += mask_ref(b, mask, i, j) != cpu::attn_allowed(idx, i, j);
        }
      BOOST_TEST(mismatches == 0);
      BOOST_TEST(cpu::attn_allowed_pairs(idx, b.T(), Tk) == pairs, attn_mask_name(mask));
    }
  }
}

BOOST_AUTO_TEST_CASE(attention_tile_classes_exact_on_block_layouts) {
  // Blocks of 96 and 50 tokens straddle tile edges, so tiles hold one block or two; a tile
  // pair wrongly classified dense would over-count pairs, wrongly skipped would under-count.
  const std::vector<std::pair<std::vector<int>, int>> layouts = {
      {{768, 300}, 4}, {{512, 512}, 4}, {{200, 333, 64}, 3}, {{1000}, 10}};
  for (const auto& [lengths, n_blocks] : layouts) {
    const Batch b = make_batch(lengths, std::vector<int>(lengths.size(), 0), n_blocks, false);
    for (AttnMask mask : kAllMasks) {
      const int64_t Tk = mask == AttnMask::cross ? b.Tc() : b.T();
      int64_t pairs = 0;
      for (int64_t i = 0; i < b.T(); ++i)
        for (int64_t j = 0; j < Tk; ++j) pairs += mask_ref(b, mask, i, j);
      BOOST_TEST(cpu::attn_allowed_pairs(b.index(mask), b.T(), Tk) == pairs, attn_mask_name(mask));
    }
  }
  check_attention(make_batch({768, 300}, {0, 0}, 4, false), AttnMask::block_causal, false);
}

// The per-call bits of the masked tiles, which every head reads instead of the rule: each bit
// is the reference rule's answer for its pair, the bits past a short edge tile's keys are clear.
void check_tile_masks(const Batch& b, AttnMask mask) {
  const int64_t Tk = mask == AttnMask::cross ? b.Tc() : b.T();
  const AttnTiles tiles(b.index(mask), b.T(), Tk);
  const cpu::AttnTileMasks masks(tiles, b.index(mask));
  int64_t masked = 0, mismatches = 0;
  for (int64_t qt = 0; qt < tiles.n_q(); ++qt)
    for (int64_t kt = 0; kt < tiles.n_k(); ++kt) {
      if (tiles.kind(qt, kt) != TileKind::masked) continue;
      ++masked;
      const TileSummary &qs = tiles.q(qt), &ks = tiles.k(kt);
      const uint64_t* rows = masks.rows(qt, kt);
      for (int64_t i = qs.begin; i < qs.end; ++i)
        for (int c = 0; c < 64; ++c) {
          const int64_t j = ks.begin + c;
          const bool want = j < ks.end && mask_ref(b, mask, i, j);
          mismatches += want != bool((rows[i - qs.begin] >> c) & 1);
        }
    }
  BOOST_TEST(masked > 0, attn_mask_name(mask));
  BOOST_TEST(mismatches == 0, attn_mask_name(mask));
}

BOOST_AUTO_TEST_CASE(attention_tile_masks_match_the_rule) {
  for (const Batch& b : {make_batch({200, 333, 64}, {0, 0, 0}, 3, false), ragged_batch(true)})
    for (AttnMask mask : kAllMasks) check_tile_masks(b, mask);
  check_tile_masks(dreamzero_batch({{4, 40, 24, 1}, {2, 33, 6, 3}}, {0, 5}, 3, 1), AttnMask::teacher_forcing);
}

BOOST_AUTO_TEST_CASE(attention_structured_batch_every_mask) {
  const Batch b = ragged_batch(false);
  for (AttnMask mask : kAllMasks) check_attention(b, mask, true);
}

BOOST_AUTO_TEST_CASE(attention_shuffled_grp_blk) {
  const Batch b = ragged_batch(true);
  for (AttnMask mask : {AttnMask::block_causal, AttnMask::prefix}) check_attention(b, mask, false);
}

// DreamZero's teacher forcing: windows that cut a block (max_chunk 1 with fpb 2 and 3), reach
// frame 0 (max_chunk 4) or never cut; samples of one token per frame (the spec's hand-checked
// case) up to 40 per frame, so tiles hold parts of frames, several frames, or several samples.
// The rule matches the position-form reference pair by pair, the tile classes count the pairs
// exactly, and the attention matches the dense reference (and finite differences).
BOOST_AUTO_TEST_CASE(attention_teacher_forcing_mask) {
  struct Layout {
    std::vector<Batch::Sample> samples;
    std::vector<int> padding;
    int fpb, max_chunk;
  };
  const std::vector<Layout> layouts = {
      {{{2, 1, 2, 1}}, {0}, 2, 1},
      {{{2, 1, 2, 1}}, {0}, 2, 4},
      {{{3, 5, 4, 1}, {2, 7, 6, 2}, {1, 3, 2, 1}}, {2, 0, 3}, 2, 1},
      {{{4, 40, 24, 1}, {2, 33, 6, 3}}, {0, 5}, 3, 1},
      {{{4, 16, 8, 1}, {4, 9, 4, 1}}, {0, 0}, 2, 4},
      {{{5, 12, 4, 2}}, {1}, 2, 2}};
  for (const Layout& l : layouts) {
    const Batch b = dreamzero_batch(l.samples, l.padding, l.fpb, l.max_chunk);
    const auto idx = b.index(AttnMask::teacher_forcing);
    int64_t pairs = 0, mismatches = 0;
    for (int64_t i = 0; i < b.T(); ++i)
      for (int64_t j = 0; j < b.T(); ++j) {
        const bool want = b.seq[i] >= 0 && b.seq[i] == b.seq[j] && teacher_forcing_ref(b, i, j);
        pairs += want;
        mismatches += want != cpu::attn_allowed(idx, i, j);
      }
    BOOST_TEST(mismatches == 0, "fpb " << l.fpb << " max_chunk " << l.max_chunk);
    BOOST_TEST(cpu::attn_allowed_pairs(idx, b.T(), b.T()) == pairs);
  }
  check_attention(dreamzero_batch({{3, 5, 4, 1}, {2, 7, 6, 2}, {1, 3, 2, 1}}, {2, 0, 3}, 2, 1),
                  AttnMask::teacher_forcing, true);
  check_attention(dreamzero_batch({{4, 40, 24, 1}, {2, 33, 6, 3}}, {0, 5}, 3, 1), AttnMask::teacher_forcing, false);
  // The other masks on the same layout (the model's baselines): states (grp 2) count as grp ≠ 0.
  const Batch b = dreamzero_batch({{3, 5, 4, 1}, {2, 7, 6, 2}}, {2, 0}, 2, 1);
  for (AttnMask mask : {AttnMask::block_causal, AttnMask::prefix}) {
    int64_t pairs = 0;
    for (int64_t i = 0; i < b.T(); ++i)
      for (int64_t j = 0; j < b.T(); ++j) pairs += mask_ref(b, mask, i, j);
    BOOST_TEST(cpu::attn_allowed_pairs(b.index(mask), b.T(), b.T()) == pairs, attn_mask_name(mask));
    check_attention(b, mask, false);
  }
}

BOOST_AUTO_TEST_CASE(attention_block_causal_skips_tiles) {
  // 2 samples × 4 blocks of 64 clean + 64 noisy tokens: tile-aligned blocks.
  const Batch b = make_batch({512, 512}, {0, 0}, 4, false);
  const auto full = cpu::attention_tile_stats(b.index(AttnMask::full), b.T(), b.T());
  const auto causal = cpu::attention_tile_stats(b.index(AttnMask::block_causal), b.T(), b.T());
  BOOST_TEST(full.total == 16 * 16);
  BOOST_TEST(full.visited == 2 * 8 * 8);  // only the two diagonal sample blocks
  BOOST_TEST(full.dense == full.visited);
  // Per sample, clean blocks (4 tiles) see clean blocks ≤ theirs: 10 tile pairs; noisy blocks
  // see earlier clean blocks (6) and themselves (4).
  BOOST_TEST(causal.visited == 2 * (10 + 6 + 4));
  BOOST_TEST(causal.dense == causal.visited);
}

BOOST_AUTO_TEST_CASE(attention_threads_give_identical_results) {
  const Batch b = ragged_batch(false);
  const int H = 3, hd = 8;
  const int64_t T = b.T(), ld = H * hd;
  const auto idx = b.index(AttnMask::block_causal);
  const auto q = random_floats(T * ld, 111), k = random_floats(T * ld, 112), v = random_floats(T * ld, 113);
  const auto dout = random_floats(T * ld, 114);
  auto run = [&](int threads, bool only_dv) {
    const int keep = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<float> out(T * ld), lse(T * H), dq(T * ld, 0.f), dk(T * ld, 0.f), dv(T * ld, 0.f);
    cpu::attention_forward(q.data(), k.data(), v.data(), out.data(), lse.data(), T, T, H, hd, idx);
    cpu::attention_backward(q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(),
                            only_dv ? nullptr : dq.data(), only_dv ? nullptr : dk.data(), dv.data(), T, T, H, hd, idx);
    omp_set_num_threads(keep);
    return std::vector<std::vector<float>>{out, dq, dk, dv};
  };
  const auto one = run(1, false), three = run(3, false), dv_only = run(1, true);
  for (int t = 0; t < 4; ++t) BOOST_TEST(one[t] == three[t]);
  BOOST_TEST(dv_only[3] == one[3]);
}

BOOST_AUTO_TEST_CASE(attention_real_row_without_key_throws) {
  Batch b = make_batch({10, 12}, {0, 0}, 1, false);
  for (int32_t& s : b.cseq)
    if (s == 1) s = -1;  // sample 1 loses its context
  const int64_t ld = 4;
  std::vector<float> q(b.T() * ld, 0.5f), kv(b.Tc() * ld, 0.5f), out(b.T() * ld), lse(b.T());
  try {
    cpu::attention_forward(q.data(), kv.data(), kv.data(), out.data(), lse.data(), b.T(), b.Tc(), 1, 4,
                           b.index(AttnMask::cross));
    BOOST_ERROR("expected emb::Error");
  } catch (const emb::Error& e) {
    BOOST_TEST(std::string(e.what()) == "attention: query token 10 (seq 1) has no allowed key under mask cross");
  }
}

// An empty context (Tk = 0) leaves every real query without a key: the same error as above.
// Only padding queries and no keys is fine: output 0, lse −inf (kernels/cuda does the same).
BOOST_AUTO_TEST_CASE(attention_empty_context) {
  Batch b = make_batch({3, 2}, {0, 2}, 1, false);
  const int64_t ld = 4;
  std::vector<float> q(b.T() * ld, 0.5f), out(b.T() * ld, 7.0f), lse(b.T(), 7.0f);
  auto idx = b.index(AttnMask::cross);
  idx.k_seq = nullptr;
  try {
    cpu::attention_forward(q.data(), nullptr, nullptr, out.data(), lse.data(), b.T(), 0, 1, 4, idx);
    BOOST_ERROR("expected emb::Error");
  } catch (const emb::Error& e) {
    BOOST_TEST(std::string(e.what()) == "attention: query token 0 (seq 0) has no allowed key under mask cross");
  }
  for (int32_t& s : b.seq) s = -1;
  cpu::attention_forward(q.data(), nullptr, nullptr, out.data(), lse.data(), b.T(), 0, 1, 4, b.index(AttnMask::cross));
  for (float o : out) BOOST_TEST(o == 0.0f);
  for (float l : lse) BOOST_TEST(l == -INFINITY);
  std::vector<float> dq(b.T() * ld, 1.0f);
  cpu::attention_backward(q.data(), nullptr, nullptr, out.data(), lse.data(), q.data(), dq.data(), nullptr, nullptr,
                          b.T(), 0, 1, 4, b.index(AttnMask::cross));
  for (float g : dq) BOOST_TEST(g == 1.0f);  // accumulates nothing
}

// Scores that overflow to -Inf against every allowed key (lr 1e6, init_std 1e10) leave a real
// row with no key taken: NaN like a NaN score (train.nan_policy decides), not a keyless error.
BOOST_AUTO_TEST_CASE(attention_overflowing_row_is_nan) {
  const Batch b = ragged_batch(false);
  const int H = 2, hd = 8;
  const int64_t T = b.T(), ld = H * hd, row = 40;
  auto q = random_floats(T * ld, 131), k = random_floats(T * ld, 132);
  const auto v = random_floats(T * ld, 133), dout = random_floats(T * ld, 134);
  for (int64_t j = 0; j < T; ++j)
    for (int d = 0; d < hd; ++d) k[j * ld + d] = 1.0f + std::fabs(k[j * ld + d]);  // head 0: every key positive
  for (int d = 0; d < hd; ++d) q[row * ld + d] = -FLT_MAX;  // so each of the row's head-0 scores is -Inf
  std::vector<float> out(T * ld), lse(T * H), dq(T * ld, 0.f);
  const auto idx = b.index(AttnMask::full);
  cpu::attention_forward(q.data(), k.data(), v.data(), out.data(), lse.data(), T, T, H, hd, idx);
  cpu::attention_backward(q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(), dq.data(), nullptr,
                          nullptr, T, T, H, hd, idx);
  BOOST_TEST(std::isnan(lse[row * H]));
  for (int d = 0; d < hd; ++d) BOOST_TEST(std::isnan(out[row * ld + d]));
  BOOST_TEST(std::isnan(dq[row * ld]));
  BOOST_TEST(std::isfinite(lse[row * H + 1]));  // head 1 of the row is untouched
  BOOST_TEST(std::isfinite(out[row * ld + hd]));
  for (int64_t i = 0; i < T; ++i)
    if (b.seq[i] != b.seq[row]) BOOST_TEST_REQUIRE(std::isfinite(out[i * ld]));
}

// A NaN in one query makes that row's output, lse and dq NaN (even when every score of the row
// is NaN) and leaves the other samples finite; a real row is never reported keyless for it.
BOOST_AUTO_TEST_CASE(attention_nan_row_propagates) {
  const Batch b = ragged_batch(false);
  const int H = 2, hd = 8;
  const int64_t T = b.T(), ld = H * hd;
  for (AttnMask mask : {AttnMask::full, AttnMask::block_causal}) {
    for (int64_t nan_row : {int64_t{0}, int64_t{40}}) {
      auto q = random_floats(T * ld, 121);
      const auto k = random_floats(T * ld, 122), v = random_floats(T * ld, 123), dout = random_floats(T * ld, 124);
      q[nan_row * ld] = NAN;  // head 0 of the row
      std::vector<float> out(T * ld), lse(T * H), dq(T * ld, 0.f), dk(T * ld, 0.f), dv(T * ld, 0.f);
      const auto idx = b.index(mask);
      cpu::attention_forward(q.data(), k.data(), v.data(), out.data(), lse.data(), T, T, H, hd, idx);
      cpu::attention_backward(q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(), dq.data(), dk.data(),
                              dv.data(), T, T, H, hd, idx);
      BOOST_TEST(std::isnan(lse[nan_row * H]));
      BOOST_TEST(std::isnan(out[nan_row * ld]));
      BOOST_TEST(std::isnan(dq[nan_row * ld]));
      BOOST_TEST(std::isfinite(lse[nan_row * H + 1]));  // the other head is untouched
      for (int64_t i = 0; i < T; ++i) {
        if (b.seq[i] == b.seq[nan_row]) continue;
        BOOST_TEST_REQUIRE(std::isfinite(out[i * ld]));
        BOOST_TEST_REQUIRE(std::isfinite(dq[i * ld]));
      }
    }
  }
}
