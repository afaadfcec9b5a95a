#include "kernels/cpu/dropout.hpp"

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
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

// f(c, m) for every column c of row r, m the factor dropout applies there: 1/(1 − p) where kept,
// 0 where dropped, 1 on padding rows. One Philox block per four elements.
template <class F>
void for_row(int64_t r, int C, const DropoutConfig& cfg, const DropoutRows& rows, F f) {
  const int32_t s = rows.seq[r];
  if (s < 0) {
    for (int c = 0; c < C; ++c) f(c, 1.0f);
    return;
  }
  const uint32_t threshold = dropout_threshold(cfg.p);
  const float scale = dropout_scale(cfg.p);
  const int64_t sample = rows.sample_id[s];
  const uint64_t first = uint64_t(rows.token[r]) * uint64_t(C);
  philox::Block block{};
  uint64_t block_of = ~uint64_t(0);
  for (int c = 0; c < C; ++c) {
    const uint64_t e = first + uint64_t(c);
    if (e >> 2 != block_of) block = dropout_block(cfg, sample, e), block_of = e >> 2;
    f(c, block.w[e & 3] >= threshold ? scale : 0.0f);
  }
}

}  // namespace

void dropout_forward(const float* x, float* y, int64_t N, int C, const DropoutConfig& cfg, const DropoutRows& rows) {
  check_tokens(N, C, rows);
#pragma omp parallel for if (N * C >= kParallelElements)
  for (int64_t r = 0; r < N; ++r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    for_row(r, C, cfg, rows, [&](int c, float m) { yr[c] = xr[c] * m; });
  }
}

void dropout_backward(const float* dy, float* dx, int64_t N, int C, const DropoutConfig& cfg,
                      const DropoutRows& rows) {
  check_tokens(N, C, rows);
#pragma omp parallel for if (N * C >= kParallelElements)
  for (int64_t r = 0; r < N; ++r) {
    const float* dyr = dy + r * C;
    float* dxr = dx + r * C;
    for_row(r, C, cfg, rows, [&](int c, float m) { dxr[c] += dyr[c] * m; });
  }
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
