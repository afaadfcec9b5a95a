// What the tensor-core attention kernels (attention_mma.cu: mma.sync; attention_wgmma.cu and
// attention_wgmma_backward.cu: wgmma) share per warp: the two rows a lane holds of its warp's 16
// (the accumulator layout of mma.m16n8 and of wgmma, where warp w of a warpgroup owns rows
// 16w .. 16w + 15), the summary of a span of tokens for tile skipping, the forward's online
// softmax with its epilogue, and the backward's gradient epilogue.
#pragma once
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/attention_passes.cuh"
#include "kernels/cuda/mma_tiles.cuh"

namespace emb::cuda {

constexpr int kWarpRows = 16;  // one m16 tile of rows per warp
// Scores are kept in log2 units (s·log2 e) so that the softmax uses exp2f (one FFMA + MUFU.EX2).
constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;

// The summary of tokens [first, first + count) (count a multiple of kAttnTile): kernel tiles
// span several of the kAttnTile-token summaries.
__device__ inline TileSummary span_summary(const TileSummary* tiles, int64_t first, int count, int64_t T) {
  TileSummary s = empty_tile();
  const int64_t n = tiles_of(T), end = (first + count) / kAttnTile < n ? (first + count) / kAttnTile : n;
  for (int64_t t = first / kAttnTile; t < end; ++t) s = merge_tiles(s, tiles[t]);
  return s;
}

// Whether key tile kt (of KEY_TILE keys) may hold an allowed pair for the queries of q_span.
template <int KEY_TILE>
__device__ __forceinline__ bool key_tile_allowed(const Params& p, const TileSummary& q_span, int64_t kt) {
  return tiles_may_attend(p.mask, q_span, span_summary(p.k_tiles, kt * KEY_TILE, KEY_TILE, p.Tk));
}

// Whether query tile qt (of QUERY_TILE queries) may hold an allowed pair for the keys of k_span.
template <int QUERY_TILE>
__device__ __forceinline__ bool query_tile_allowed(const Params& p, const TileSummary& k_span, int64_t qt) {
  return tiles_may_attend(p.mask, span_summary(p.q_tiles, qt * QUERY_TILE, QUERY_TILE, p.Tq), k_span);
}

// This thread's two rows of its warp's 16 (rows g and g + 8 of the mma layout), warp w of the
// block owning rows block_row0 + 16w ...
struct WarpRows {
  int64_t row[2];
  __device__ WarpRows(int64_t block_row0) {
    const int64_t r0 = block_row0 + (threadIdx.x / 32) * kWarpRows + (threadIdx.x % 32) / 4;
    row[0] = r0;
    row[1] = r0 + 8;
  }
};

// What the tensor-core backwards recompute P and dS of query row i from (head h): its lse in log2
// units and D = rowsum(dout ∘ out); 0 for the padding rows of a tile past Tq.
__device__ __forceinline__ float query_lse2(const Params& p, const float* lse, int64_t i, int h) {
  return i < p.Tq ? lse[i * p.H + h] * kLog2e : 0.0f;
}
__device__ __forceinline__ float query_D(const Params& p, const float* D, int64_t i, int h) {
  return i < p.Tq ? D[i * p.H + h] : 0.0f;
}

// The query rows of a dQ kernel's lane (both tensor-core backwards): their tokens, query_lse2 and
// query_D, read once; ds() turns a score and its dP into dS = P ∘ (dP − D), P recomputed from lse
// where the pair may attend and 0 where it may not.
struct DqRows {
  TokenIndex token[2];
  float lse2[2], D[2];
  __device__ DqRows(const WarpRows& rows, const Params& p, const float* lse, const float* D_all, int h) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t i = rows.row[r];
      token[r] = p.q_side.at(i);
      lse2[r] = query_lse2(p, lse, i, h);
      D[r] = query_D(p, D_all, i, h);
    }
  }
  // Accumulator element e (row e / 2 of the lane's two) against key token kj.
  __device__ __forceinline__ float ds(const Params& p, float scale_log2, float score, float dp, int e,
                                      TokenIndex kj) const {
    const float pr = tokens_attend(p.mask, token[e / 2], kj) ? exp2f(score * scale_log2 - lse2[e / 2]) : 0.0f;
    return pr * (dp - D[e / 2]);
  }
};

// The gradient epilogue: fn(element offset, accumulator [d][2r + c]) for each element of a
// [16, HD] accumulator this lane holds, in rows below T (element offset row·ld + col0 + column).
template <int HD, class Fn>
__device__ __forceinline__ void for_each_gradient_element(const WarpRows& rows, int64_t T, int64_t ld, int64_t col0,
                                                          int lane, Fn fn) {
  const int t = lane % 4;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = rows.row[r];
    if (row >= T) continue;
#pragma unroll
    for (int d = 0; d < HD / 8; ++d)
#pragma unroll
      for (int c = 0; c < 2; ++c) fn(row * ld + col0 + 8 * d + 2 * t + c, d, 2 * r + c);
  }
}

// The forward's running softmax state of this lane's two rows, over tiles of scores in the
// accumulator layout (s[n][e]: row g + 8·(e / 2), column 8n + 2t + e % 2; o likewise over HD).
template <int HD>
struct OnlineSoftmax {
  float m[2] = {-INFINITY, -INFINITY};  // running max (log2 units)
  float l[2] = {0.0f, 0.0f};            // this lane's partial sums
  int allowed[2] = {0, 0};              // this lane saw an allowed key of the row, whatever its score

  // Masks the raw scores s of an N-key tile (attends(e, col): row e / 2 may attend key col),
  // rescales o to the new running max and turns s into P = exp2(s·scale_log2 − max).
  template <int N, class Attends>
  __device__ __forceinline__ void step(float (&s)[N / 8][4], float (&o)[HD / 8][4], float scale_log2, int lane,
                                       Attends attends) {
    rescale(o, to_p<N>(s, scale_log2, lane, attends));
  }

  // Per row of the lane's two, the factor exp2(old max − new max) by which o, holding the tiles
  // before, is rescaled before the tile's P·V is added to it.
  struct Corrections {
    float row[2];
  };

  // step() without touching o, for a caller whose o is still being accumulated (the wgmma forward
  // computes the next tile's P while this one's P·V is in flight): masks s, updates the running max
  // and sums, turns s into P; o takes the returned corrections (rescale) before that tile's P·V.
  template <int N, class Attends>
  __device__ __forceinline__ Corrections to_p(float (&s)[N / 8][4], float scale_log2, int lane, Attends attends) {
    Corrections c;
    for_each_element<N>(lane, [&](int n, int e, int col) {
      const bool a = attends(e, col);
      allowed[e / 2] |= a;
      s[n][e] = a ? s[n][e] * scale_log2 : -INFINITY;
    });
#pragma unroll
    for (int r = 0; r < 2; ++r) {  // row g + 8r; its 4 lanes (a quad) share it
      float mx = -INFINITY;
#pragma unroll
      for (int n = 0; n < N / 8; ++n) mx = nan_max(mx, nan_max(s[n][2 * r], s[n][2 * r + 1]));
      mx = nan_max(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = nan_max(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = nan_max(m[r], mx);
      // No allowed key yet: m stays −inf and scores are taken against 0 (exp2(−inf) = 0, not NaN).
      const float m_ref = m_new == -INFINITY ? 0.0f : m_new;
      c.row[r] = exp2f(m[r] - m_ref);
      m[r] = m_new;
      l[r] *= c.row[r];
#pragma unroll
      for (int n = 0; n < N / 8; ++n)
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          s[n][2 * r + k] = exp2f(s[n][2 * r + k] - m_ref);
          l[r] += s[n][2 * r + k];
        }
    }
    return c;
  }

  static __device__ __forceinline__ void rescale(float (&o)[HD / 8][4], const Corrections& c) {
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int d = 0; d < HD / 8; ++d) o[d][2 * r] *= c.row[r], o[d][2 * r + 1] *= c.row[r];
  }

  // out rows (bf16, head h's columns) = o / l and lse for the rows below p.Tq.
  __device__ __forceinline__ void store(const float (&o)[HD / 8][4], const WarpRows& rows, const Params& p, int h,
                                        int lane, __nv_bfloat16* out, float* lse) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
      l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
      allowed[r] |= __shfl_xor_sync(0xffffffffu, allowed[r], 1);
      allowed[r] |= __shfl_xor_sync(0xffffffffu, allowed[r], 2);
    }
    const int t = lane % 4;
    const int64_t ld = int64_t(p.H) * HD;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int64_t i = rows.row[r];
      if (i >= p.Tq) continue;
      // NaN stays NaN; l = 0: empty_row_*.
      const float inv_l = l[r] != 0.0f ? 1.0f / l[r] : empty_row_inverse_sum(allowed[r]);
      __nv_bfloat16* dst = out + i * ld + int64_t(h) * HD + 2 * t;
#pragma unroll
      for (int d = 0; d < HD / 8; ++d)
        *reinterpret_cast<uint32_t*>(dst + 8 * d) = pack_bf16x2(o[d][2 * r] * inv_l, o[d][2 * r + 1] * inv_l);
      if (t == 0) lse[i * p.H + h] = l[r] != 0.0f ? (m[r] + log2f(l[r])) * kLn2 : empty_row_lse(allowed[r]);
    }
  }
};

}  // namespace emb::cuda
