#include "kernels/cpu/attention.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "kernels/attention_tiles.hpp"
#include "kernels/cpu/attention_tile_masks.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/exp_fast.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {

constexpr float kNegInf = -INFINITY;

// One head's view of a [T, H*hd] tensor: row i of head h starts at base + i*ld + h*hd.
struct HeadView {
  const float* base;
  int64_t ld;
  const float* row(int64_t i) const { return base + i * ld; }
};

// The length of the run of `bit`s that starts at bit 0 of `word` (64 when the whole word is).
int low_run(uint64_t word, bool bit) {
  const uint64_t other = bit ? ~word : word;
  return other ? __builtin_ctzll(other) : 64;
}

// s[c] = −∞ where bit c of `allowed` is clear, for c < n: a run of forbidden keys at a time (a
// tile row of packed samples holds one or two runs of allowed keys), the allowed scores untouched.
void mask_row(float* s, int n, uint64_t allowed) {
  for (int c = 0; c < n;) {
    const int forbidden_end = std::min(n, c + low_run(allowed >> c, false));
    std::fill(s + c, s + forbidden_end, kNegInf);
    if (forbidden_end == n) return;
    c = forbidden_end + low_run(allowed >> forbidden_end, true);
  }
}

// S[r, c] = scale·q_(i0+r) · k_(j0+c) for the tile, −∞ where the mask forbids the pair:
// `allowed` holds the tile's row words (AttnTileMasks) for a masked tile, nullptr for a dense one.
// S has row stride kAttnTileK.
void tile_scores(HeadView q, HeadView k, const TileSummary& qs, const TileSummary& ks, const uint64_t* allowed,
                 int hd, float scale, float* S) {
  const int bq = static_cast<int>(qs.end - qs.begin), bk = static_cast<int>(ks.end - ks.begin);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bq, bk, hd, scale, q.row(qs.begin), q.ld, k.row(ks.begin),
              k.ld, 0.0f, S, kAttnTileK);
  if (!allowed) return;
  for (int r = 0; r < bq; ++r) mask_row(S + r * kAttnTileK, bk, allowed[r]);
}

// The row words tile_scores takes for tile pair (qt, kt) of `kind`.
const uint64_t* tile_allowed(const AttnTileMasks& masks, TileKind kind, int64_t qt, int64_t kt) {
  return kind == TileKind::masked ? masks.rows(qt, kt) : nullptr;
}

float row_max(const float* s, int n) {
  float m = kNegInf;
#pragma omp simd reduction(max : m)
  for (int c = 0; c < n; ++c) m = std::max(m, s[c]);
  return m;
}

// p[c] = e^(s[c] − m) in place; returns Σ p.
float exp_shifted(float* s, int n, float m) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int c = 0; c < n; ++c) {
    s[c] = exp_fast(s[c] - m);
    sum += s[c];
  }
  return sum;
}

// Streams the key tiles of query tile `qs` for one head with an online softmax; writes the
// tile's rows of out and lse (lse = −∞ for rows without any allowed key).
void forward_tile(HeadView q, HeadView k, HeadView v, float* out, float* lse, int64_t ld, int H, int h, int hd,
                  const AttnTiles& tiles, const AttnTileMasks& masks, int64_t qt, std::vector<float>& S,
                  std::vector<float>& O, std::vector<float>& m, std::vector<float>& l) {
  const TileSummary& qs = tiles.q(qt);
  const int bq = static_cast<int>(qs.end - qs.begin);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::fill(O.begin(), O.end(), 0.0f);
  std::fill(m.begin(), m.end(), kNegInf);
  std::fill(l.begin(), l.end(), 0.0f);
  for (int64_t kt = 0; kt < tiles.n_k(); ++kt) {
    const TileKind kind = tiles.kind(qt, kt);
    if (kind == TileKind::skip) continue;
    const TileSummary& ks = tiles.k(kt);
    const int bk = static_cast<int>(ks.end - ks.begin);
    tile_scores(q, k, qs, ks, tile_allowed(masks, kind, qt, kt), hd, scale, S.data());
    for (int r = 0; r < bq; ++r) {
      float* s = S.data() + r * kAttnTileK;
      const float m_new = std::max(m[r], row_max(s, bk));
      if (m_new == kNegInf) {  // nothing allowed for this row yet (or only NaN scores, which row_max skips)
        if (std::any_of(s, s + bk, [](float x) { return std::isnan(x); })) l[r] = NAN;
        std::fill(s, s + bk, 0.0f);
        continue;
      }
      const float alpha = exp_fast(m[r] - m_new);
      l[r] = l[r] * alpha + exp_shifted(s, bk, m_new);
      m[r] = m_new;
      if (alpha != 1.0f)
        for (int d = 0; d < hd; ++d) O[r * hd + d] *= alpha;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bq, hd, bk, 1.0f, S.data(), kAttnTileK, v.row(ks.begin),
                v.ld, 1.0f, O.data(), hd);
  }
  for (int r = 0; r < bq; ++r) {
    const int64_t i = qs.begin + r;
    float* o = out + i * ld + int64_t{h} * hd;
    // l = 0 only without an allowed key (padding rows; real rows are reported); NaN stays NaN.
    const float inv_l = l[r] != 0.0f ? 1.0f / l[r] : 0.0f;
    for (int d = 0; d < hd; ++d) o[d] = O[r * hd + d] * inv_l;
    lse[i * H + h] = l[r] != 0.0f ? m[r] + std::log(l[r]) : kNegInf;
  }
}

}  // namespace

bool attn_allowed(const AttnIndex& idx, int64_t i, int64_t j) { return attn_pair_allowed(idx, i, j); }

void attention_forward(const float* q, const float* k, const float* v, float* out, float* lse, int64_t Tq,
                       int64_t Tk, int H, int hd, const AttnIndex& idx) {
  const AttnTiles tiles(idx, Tq, Tk);
  const AttnTileMasks masks(tiles, idx);
  const int64_t ld = int64_t{H} * hd;
  const int64_t n_tasks = H * tiles.n_q();
  struct Tile {
    std::vector<float> S, O, m, l;
  };
  parallel_for_scratch<Schedule::dynamic>(
      n_tasks, true,
      [hd]() -> Tile& {
        // Per thread, kept across calls (zeroed as fresh vectors were): no heap allocation per call.
        static thread_local Tile t;
        t.S.assign(kAttnTileQ * kAttnTileK, 0.0f), t.O.assign(size_t(kAttnTileQ) * hd, 0.0f);
        t.m.assign(kAttnTileQ, 0.0f), t.l.assign(kAttnTileQ, 0.0f);
        return t;
      },
      [&](Tile& t, int64_t task) {
        const int h = static_cast<int>(task % H);
        const int64_t qt = task / H;
        forward_tile({q + h * hd, ld}, {k + h * hd, ld}, {v + h * hd, ld}, out, lse, ld, H, h, hd, tiles, masks, qt,
                     t.S, t.O, t.m, t.l);
      });
  // A real row that took no key: its mask allows none (a bug, MODEL.md: an error), or every
  // allowed score of a head was -Inf (an overflowing activation or parameter). The latter is a
  // non-finite activation like a NaN score: the head's row becomes NaN, so the loss does and
  // train.nan_policy decides, instead of a keyless-row error that names no cause.
  for (int64_t i = 0; i < Tq; ++i) {
    if (idx.q_seq[i] < 0 || std::none_of(lse + i * H, lse + (i + 1) * H, [](float l) { return l == kNegInf; }))
      continue;
    bool any_allowed = false;
    for (int64_t j = 0; j < Tk && !any_allowed; ++j) any_allowed = attn_allowed(idx, i, j);
    if (!any_allowed)
      throw Error(str("attention: query token ", i, " (seq ", idx.q_seq[i], ") has no allowed key under mask ",
                      attn_mask_name(idx.mask)));
    for (int h = 0; h < H; ++h) {
      if (lse[i * H + h] != kNegInf) continue;
      lse[i * H + h] = NAN;
      std::fill(out + i * ld + int64_t{h} * hd, out + i * ld + int64_t{h + 1} * hd, NAN);
    }
  }
}

// Flash backward per head: P = e^(S − lse) recomputed per tile, D_i = Σ dO_i·O_i,
// dV += Pᵀ dO, dS = P∘(dO Vᵀ − D), dQ += scale·dS K, dK += scale·dSᵀ Q.
void attention_backward(const float* q, const float* k, const float* v, const float* out, const float* lse,
                        const float* dout, float* dq, float* dk, float* dv, int64_t Tq, int64_t Tk, int H, int hd,
                        const AttnIndex& idx) {
  const AttnTiles tiles(idx, Tq, Tk);
  const AttnTileMasks masks(tiles, idx);
  const int64_t ld = int64_t{H} * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  struct Head {
    std::vector<float> P, dS, D;
  };
  parallel_for_scratch<Schedule::dynamic>(
      H, true,
      [Tq]() -> Head& {
        static thread_local Head t;  // as the forward's
        t.P.assign(kAttnTileQ * kAttnTileK, 0.0f), t.dS.assign(kAttnTileQ * kAttnTileK, 0.0f);
        t.D.assign(size_t(Tq), 0.0f);
        return t;
      },
      [&](Head& t, int64_t head) {
        std::vector<float>& P = t.P;
        std::vector<float>& dS = t.dS;
        std::vector<float>& D = t.D;
        const int h = static_cast<int>(head);
        const int64_t col = int64_t{h} * hd;
        const HeadView qh{q + col, ld}, kh{k + col, ld}, vh{v + col, ld}, doh{dout + col, ld};
        for (int64_t i = 0; i < Tq; ++i) {
          double s = 0.0;
          for (int d = 0; d < hd; ++d) s += double(dout[i * ld + col + d]) * out[i * ld + col + d];
          D[i] = static_cast<float>(s);
        }
        for (int64_t kt = 0; kt < tiles.n_k(); ++kt) {
          const TileSummary& ks = tiles.k(kt);
          const int bk = static_cast<int>(ks.end - ks.begin);
          for (int64_t qt = 0; qt < tiles.n_q(); ++qt) {
            const TileKind kind = tiles.kind(qt, kt);
            if (kind == TileKind::skip) continue;
            const TileSummary& qs = tiles.q(qt);
            const int bq = static_cast<int>(qs.end - qs.begin);
            tile_scores(qh, kh, qs, ks, tile_allowed(masks, kind, qt, kt), hd, scale, P.data());
            for (int r = 0; r < bq; ++r) {
              float* p = P.data() + r * kAttnTileK;
              const float row_lse = lse[(qs.begin + r) * H + h];
              if (row_lse == kNegInf)
                std::fill(p, p + bk, 0.0f);
              else
                exp_shifted(p, bk, row_lse);
            }
            if (dv)
              cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, bk, hd, bq, 1.0f, P.data(), kAttnTileK,
                          doh.row(qs.begin), ld, 1.0f, dv + ks.begin * ld + col, ld);
            if (!dq && !dk) continue;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bq, bk, hd, 1.0f, doh.row(qs.begin), ld,
                        vh.row(ks.begin), ld, 0.0f, dS.data(), kAttnTileK);
            for (int r = 0; r < bq; ++r) {
              const float Di = D[qs.begin + r];
              float* ds = dS.data() + r * kAttnTileK;
              const float* p = P.data() + r * kAttnTileK;
              for (int c = 0; c < bk; ++c) ds[c] = p[c] * (ds[c] - Di);
            }
            if (dq)
              cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bq, hd, bk, scale, dS.data(), kAttnTileK,
                          kh.row(ks.begin), ld, 1.0f, dq + qs.begin * ld + col, ld);
            if (dk)
              cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, bk, hd, bq, scale, dS.data(), kAttnTileK,
                          qh.row(qs.begin), ld, 1.0f, dk + ks.begin * ld + col, ld);
          }
        }
      });
}

int64_t attn_allowed_pairs(const AttnIndex& idx, int64_t Tq, int64_t Tk) {
  const AttnTiles tiles(idx, Tq, Tk);
  int64_t pairs = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : pairs)
  for (int64_t qt = 0; qt < tiles.n_q(); ++qt) {
    const TileSummary& qs = tiles.q(qt);
    for (int64_t kt = 0; kt < tiles.n_k(); ++kt) {
      const TileSummary& ks = tiles.k(kt);
      const TileKind kind = tiles.kind(qt, kt);
      if (kind == TileKind::dense) pairs += (qs.end - qs.begin) * (ks.end - ks.begin);
      if (kind != TileKind::masked) continue;
      for (int64_t i = qs.begin; i < qs.end; ++i)
        for (int64_t j = ks.begin; j < ks.end; ++j) pairs += attn_pair_allowed(idx, i, j);
    }
  }
  return pairs;
}

AttnTileStats attention_tile_stats(const AttnIndex& idx, int64_t Tq, int64_t Tk) {
  const AttnTiles tiles(idx, Tq, Tk);
  AttnTileStats stats;
  for (int64_t qt = 0; qt < tiles.n_q(); ++qt)
    for (int64_t kt = 0; kt < tiles.n_k(); ++kt) {
      const TileKind kind = tiles.kind(qt, kt);
      ++stats.total;
      stats.visited += kind != TileKind::skip;
      stats.dense += kind == TileKind::dense;
    }
  return stats;
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                               const AttnConfig& cfg, const AttnIndex& idx) {
  fp32_contiguous(check_attention("attention_forward", q, k, v, out, lse, cfg, idx));
  cpu::attention_forward(cf(q), cf(k), cf(v), f(out), f(lse), q.rows, k.rows, cfg.heads, cfg.head_dim, idx);
}

void CpuOps::attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                const View& dout, const View& dq, const View& dk, const View& dv,
                                const AttnConfig& cfg, const AttnIndex& idx) {
  fp32_contiguous(check_attention_backward(q, k, v, out, lse, dout, dq, dk, dv, cfg, idx));
  cpu::attention_backward(cf(q), cf(k), cf(v), cf(out), cf(lse), cf(dout), f(dq), f(dk), f(dv), q.rows, k.rows,
                          cfg.heads, cfg.head_dim, idx);
}

}  // namespace emb
