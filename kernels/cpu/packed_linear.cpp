#include "kernels/cpu/packed_linear.hpp"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/packed_tile.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {

using namespace packed;

// Each thread owns a contiguous range of column panels and packs x itself (a few hundred kB per K
// block, small beside its share of the FLOPs): no barrier inside the product, which matters on a
// shared machine where a spinning barrier waits for a descheduled thread.
void gemm_avx512(const float* x, int64_t M, int64_t K, int64_t N, const float* packed, float* y) {
  const int64_t row_panels = (M + kMr - 1) / kMr, panels = col_panels(N);
  for_each_thread(max_team(M * N * K >= (1 << 20)), [&](int64_t t, int64_t threads) {
    std::vector<float> A(size_t(row_panels * kPanelFloats));
    const int64_t j0 = panels * t / threads, j1 = panels * (t + 1) / threads;
    for (int64_t k0 = 0; k0 < K && j0 < j1; k0 += kKc) {
      const int64_t kc = std::min(kKc, K - k0);
      for (int64_t row = 0; row < row_panels * kMr; ++row) {
        float* dst = A.data() + row * kKc;
        if (row < M)
          std::copy(x + row * K + k0, x + row * K + k0 + kc, dst);
        else
          std::fill(dst, dst + kc, 0.0f);
      }
      const float* block = packed + k0 * panels * kNr;
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = 0; i < row_panels; ++i)
          micro_tile(kc, A.data() + i * kPanelFloats, block + j * kc * kNr, y + i * kMr * N + j * kNr, N,
                     int(std::min<int64_t>(kMr, M - i * kMr)), N - j * kNr, k0 > 0);
    }
  });
}

}  // namespace

int64_t packed_linear_elements(int64_t K, int64_t N) { return avx512() ? col_panels(N) * kNr * K : K * N; }

void pack_linear(const float* W, int64_t K, int64_t N, float* packed) {
  if (!avx512()) {
    std::copy(W, W + K * N, packed);
    return;
  }
  const int64_t panels = col_panels(N);
  parallel_for(K, K * N >= (1 << 18), [=](int64_t k) {
    const int64_t k0 = k / kKc * kKc, kc = std::min(kKc, K - k0);
    float* block = packed + k0 * panels * kNr;
    for (int64_t j = 0; j < panels; ++j)
      for (int c = 0; c < kNr; ++c) {
        const int64_t col = j * kNr + c;
        block[(j * kc + (k - k0)) * kNr + c] = col < N ? W[k * N + col] : 0.0f;
      }
  });
}

void packed_linear_forward(const float* x, int64_t M, int64_t K, int64_t N, const float* packed, float* y) {
  if (M == 0) return;
  if (avx512())
    gemm_avx512(x, M, K, N, packed, y);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, x, int(K), packed, int(N),
                0.0f, y, int(N));
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

int64_t CpuOps::packed_linear_elements(int64_t in, int64_t out) const { return cpu::packed_linear_elements(in, out); }

void CpuOps::pack_linear(const View& W, const View& packed) {
  fp32(check_pack_linear(*this, W, packed));
  cpu::pack_linear(cf(W), W.rows, W.cols, f(packed));
}

void CpuOps::packed_linear_forward(const View& x, const View& packed, const View& b, Activation act, const View& pre,
                                   const View& y) {
  fp32_contiguous(check_packed_linear(*this, x, packed, b, act, pre, y));
  float* out = gemm_output(act, pre, y);
  cpu::packed_linear_forward(cf(x), x.rows, x.cols, y.cols, cf(packed), out);
  cpu::add_bias(out, cf(b), x.rows, y.cols);
  activation_epilogue(act, pre, y);
}

}  // namespace emb
