#include "kernels/cpu/dropout.hpp"

#include <algorithm>

#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/dropout_keep.hpp"

namespace emb::cpu {
namespace {

constexpr int64_t kParallelElements = 1 << 15;

// Every real row's element indices fit a site (checked before the parallel loops, which must not throw).
void check_tokens(int64_t N, int C, const DropoutRows& rows) {
  for (int64_t r = 0; r < N; ++r)
    EMB_CHECK(rows.seq[r] < 0 || (rows.token[r] >= 0 && uint64_t(rows.token[r] + 1) * uint64_t(C) <= kDropoutElements),
              "dropout: row ", r, " is token ", rows.token[r], " of its sample, outside a site's 2^32 elements");
}

// Keep factors come kBlocks Philox blocks (4·kBlocks consecutive elements) at a time.
constexpr int kBlocks = 16;
constexpr uint64_t kChunk = 4 * kBlocks;

// What dropout multiplies one element by: 1/(1 − p) kept, 0 dropped.
struct KeepRule {
  uint32_t threshold = 0;
  float scale = 1;
};

#ifdef __AVX2__
// Eight Philox blocks, word j of block l in lane l of w[j].
struct Blocks8 {
  __m256i w[4];
};

// hi and lo 32 bits of a[l]·m for the 8 lanes (_mm256_mul_epu32 multiplies the even lanes).
inline void mul_hi_lo(__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(a, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// One round of philox::block on eight blocks with the round's key (k0, k1).
inline void philox_round(Blocks8& b, uint32_t k0, uint32_t k1) {
  __m256i hi0, lo0, hi1, lo1;
  mul_hi_lo(b.w[0], _mm256_set1_epi32(int(philox::kMul0)), hi0, lo0);
  mul_hi_lo(b.w[2], _mm256_set1_epi32(int(philox::kMul1)), hi1, lo1);
  b.w[0] = _mm256_xor_si256(_mm256_xor_si256(hi1, b.w[1]), _mm256_set1_epi32(int(k0)));
  b.w[2] = _mm256_xor_si256(_mm256_xor_si256(hi0, b.w[3]), _mm256_set1_epi32(int(k1)));
  b.w[1] = lo1;
  b.w[3] = lo0;
}

// The counters of blocks first + l, l = 0..7, from block first's (consecutive blocks' counters
// differ in word 0 only, while their elements stay within the site's 2^32).
Blocks8 counters(const philox::Block& first, int l0) {
  const __m256i lane = _mm256_setr_epi32(l0, l0 + 1, l0 + 2, l0 + 3, l0 + 4, l0 + 5, l0 + 6, l0 + 7);
  return {{_mm256_add_epi32(_mm256_set1_epi32(int(first.w[0])), lane), _mm256_set1_epi32(int(first.w[1])),
           _mm256_set1_epi32(int(first.w[2])), _mm256_set1_epi32(int(first.w[3]))}};
}

// The eight blocks' factors in element order: m[4·l + j] for word j of block l.
void store_factors(const Blocks8& b, KeepRule rule, float* m) {
  const __m256i threshold = _mm256_set1_epi32(int(rule.threshold));
  const __m256 scale = _mm256_set1_ps(rule.scale);
  auto factor = [&](__m256i w) {  // w >= threshold, unsigned
    return _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_max_epu32(w, threshold), w)), scale);
  };
  const __m256 f0 = factor(b.w[0]), f1 = factor(b.w[1]), f2 = factor(b.w[2]), f3 = factor(b.w[3]);
  const __m256 t0 = _mm256_unpacklo_ps(f0, f1), t1 = _mm256_unpackhi_ps(f0, f1);
  const __m256 t2 = _mm256_unpacklo_ps(f2, f3), t3 = _mm256_unpackhi_ps(f2, f3);
  auto lo64 = [](__m256 x, __m256 y) { return _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(x), _mm256_castps_pd(y))); };
  auto hi64 = [](__m256 x, __m256 y) { return _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(x), _mm256_castps_pd(y))); };
  const __m256 b04 = lo64(t0, t2), b15 = hi64(t0, t2), b26 = lo64(t1, t3), b37 = hi64(t1, t3);  // blocks l and l + 4
  _mm256_storeu_ps(m, _mm256_permute2f128_ps(b04, b15, 0x20));
  _mm256_storeu_ps(m + 8, _mm256_permute2f128_ps(b26, b37, 0x20));
  _mm256_storeu_ps(m + 16, _mm256_permute2f128_ps(b04, b15, 0x31));
  _mm256_storeu_ps(m + 24, _mm256_permute2f128_ps(b26, b37, 0x31));
}

// The factors of elements 4·b .. 4·b + 63 of the site (b = first_block), m[k] element 4·b + k's:
// philox::block on two independent sets of eight blocks (hiding the multiplies' latency), bit for
// bit dropout_keep's mask.
void keep_factors(const DropoutConfig& cfg, int64_t sample, uint64_t first_block, KeepRule rule, float (&m)[kChunk]) {
  const philox::Block first = dropout_counter(cfg, sample, first_block << 2);
  Blocks8 a = counters(first, 0), b = counters(first, 8);
  uint32_t k0 = uint32_t(cfg.seed), k1 = uint32_t(cfg.seed >> 32);
  for (int round = 0; round < philox::kRounds; ++round, k0 += philox::kWeyl0, k1 += philox::kWeyl1) {
    philox_round(a, k0, k1);
    philox_round(b, k0, k1);
  }
  store_factors(a, rule, m);
  store_factors(b, rule, m + 32);
}
#else
// Without AVX2 (the Debug build): the blocks one by one.
void keep_factors(const DropoutConfig& cfg, int64_t sample, uint64_t first_block, KeepRule rule, float (&m)[kChunk]) {
  for (int l = 0; l < kBlocks; ++l) {
    const philox::Block b = dropout_block(cfg, sample, (first_block + uint64_t(l)) << 2);
    for (int j = 0; j < 4; ++j) m[4 * l + j] = b.w[j] >= rule.threshold ? rule.scale : 0.0f;
  }
}
#endif

// f(c, m) for every column c of row r, m the factor dropout applies there: 1/(1 − p) where kept,
// 0 where dropped, 1 on padding rows.
template <class F>
void for_row(int64_t r, int C, const DropoutConfig& cfg, const DropoutRows& rows, F f) {
  const int32_t s = rows.seq[r];
  if (s < 0) {
    for (int c = 0; c < C; ++c) f(c, 1.0f);
    return;
  }
  const KeepRule rule{dropout_threshold(cfg.p), dropout_scale(cfg.p)};
  const int64_t sample = rows.sample_id[s];
  const uint64_t first = uint64_t(rows.token[r]) * uint64_t(C), end = first + uint64_t(C);
  float m[kChunk];
  for (uint64_t chunk = first & ~uint64_t(3); chunk < end; chunk += kChunk) {
    keep_factors(cfg, sample, chunk >> 2, rule, m);
    const uint64_t lo = std::max(first, chunk), hi = std::min(end, chunk + kChunk);
    for (uint64_t e = lo; e < hi; ++e) f(int(e - first), m[e - chunk]);
  }
}

}  // namespace

void dropout_forward(const float* x, float* y, int64_t N, int C, const DropoutConfig& cfg, const DropoutRows& rows) {
  check_tokens(N, C, rows);
  parallel_for(N, N * C >= kParallelElements, [&](int64_t r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    for_row(r, C, cfg, rows, [&](int c, float m) { yr[c] = xr[c] * m; });
  });
}

void dropout_backward(const float* dy, float* dx, int64_t N, int C, const DropoutConfig& cfg,
                      const DropoutRows& rows) {
  check_tokens(N, C, rows);
  parallel_for(N, N * C >= kParallelElements, [&](int64_t r) {
    const float* dyr = dy + r * C;
    float* dxr = dx + r * C;
    for_row(r, C, cfg, rows, [&](int c, float m) { dxr[c] += dyr[c] * m; });
  });
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::dropout_forward(const View& x, const View& y, const DropoutConfig& cfg, const DropoutRows& rows) {
  fp32_contiguous(check_dropout("dropout_forward", x, y, cfg, rows));
  cpu::dropout_forward(cf(x), f(y), x.rows, int(x.cols), cfg, rows);
}

void CpuOps::dropout_backward(const View& dy, const View& dx, const DropoutConfig& cfg, const DropoutRows& rows) {
  fp32_contiguous(check_dropout("dropout_backward", dy, dx, cfg, rows));
  cpu::dropout_backward(cf(dy), f(dx), dy.rows, int(dy.cols), cfg, rows);
}

}  // namespace emb
