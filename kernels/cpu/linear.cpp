#include "kernels/cpu/linear.hpp"

#include <cblas.h>

#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/column_sum.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

void add_bias(float* y, const float* b, int64_t N, int64_t out) {
  if (!b) return;
  parallel_for(N, N * out >= (1 << 15), [=](int64_t i) {
    float* row = y + i * out;
    for (int64_t c = 0; c < out; ++c) row[c] += b[c];
  });
}

void linear_forward(const float* x, const float* W, const float* b, float* y, int64_t N, int in, int out) {
  if (N == 0) return;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, out, in, 1.0f, x, in, W, out, 0.0f, y, out);
  add_bias(y, b, N, out);
}

void linear_backward(const float* x, const float* W, const float* dy, float* dx, float* dW, float* db, int64_t N,
                     int in, int out) {
  if (N == 0) return;
  if (dx) cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, in, out, 1.0f, dy, out, W, out, 1.0f, dx, in);
  if (dW) cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, in, out, N, 1.0f, x, in, dy, out, 1.0f, dW, out);
  if (db) accumulate_column_sums(N, out, db, [dy, out](int64_t i, int c) { return dy[i * out + c]; });
}

namespace {

// The rows of each embodiment in their original order: rows[start[e] .. start[e + 1]).
// With the gathered rows' staging, kept per thread across calls: linear_emb runs a few times a
// micro-batch, and fresh vectors were several heap allocations per call.
struct EmbGroups {
  std::vector<int64_t> start;
  std::vector<int64_t> rows;
  std::vector<int64_t> next;  // group_rows' fill position of each embodiment
  std::vector<float> x, y, dx;
};

EmbGroups& emb_workspace() {
  static thread_local EmbGroups g;
  return g;
}

// Fills g (its vectors keep their capacity across calls).
void group_rows(const int32_t* emb, int64_t N, int E, EmbGroups& g) {
  g.start.assign(E + 1, 0);
  for (int64_t i = 0; i < N; ++i) {
    EMB_CHECK(emb[i] >= 0 && emb[i] < E, "linear_emb: row ", i, " has embodiment id ", emb[i], ", expected 0..",
              E - 1);
    ++g.start[emb[i] + 1];
  }
  for (int e = 0; e < E; ++e) g.start[e + 1] += g.start[e];
  g.rows.resize(N);
  g.next.assign(g.start.begin(), g.start.end() - 1);
  for (int64_t i = 0; i < N; ++i) g.rows[g.next[emb[i]]++] = i;
}

// Copies the listed rows of src [*, C] into dst [n, C].
void gather_rows(const float* src, const int64_t* rows, int64_t n, int C, float* dst) {
  parallel_for(n, n * C >= (1 << 15),
               [=](int64_t r) { std::memcpy(dst + r * C, src + rows[r] * C, sizeof(float) * C); });
}

// dst[rows[r], :] = src[r, :]
void scatter_rows(const float* src, const int64_t* rows, int64_t n, int C, float* dst) {
  parallel_for(n, n * C >= (1 << 15),
               [=](int64_t r) { std::memcpy(dst + rows[r] * C, src + r * C, sizeof(float) * C); });
}

// dst[rows[r], :] += src[r, :]
void scatter_add_rows(const float* src, const int64_t* rows, int64_t n, int C, float* dst) {
  parallel_for(n, n * C >= (1 << 15), [=](int64_t r) {
    float* d = dst + rows[r] * C;
    const float* s = src + r * C;
    for (int c = 0; c < C; ++c) d[c] += s[c];
  });
}

}  // namespace

void linear_emb_forward(const float* x, const float* W, const float* b, const int32_t* emb, float* y, int64_t N,
                        int in, int out, int E) {
  EmbGroups& g = emb_workspace();
  group_rows(emb, N, E, g);
  std::vector<float>& xg = g.x;
  std::vector<float>& yg = g.y;
  for (int e = 0; e < E; ++e) {
    const int64_t n = g.start[e + 1] - g.start[e];
    if (n == 0) continue;
    const int64_t* rows = g.rows.data() + g.start[e];
    xg.resize(n * in);
    yg.resize(n * out);
    gather_rows(x, rows, n, in, xg.data());
    linear_forward(xg.data(), W + int64_t{e} * in * out, b ? b + int64_t{e} * out : nullptr, yg.data(), n, in, out);
    scatter_rows(yg.data(), rows, n, out, y);
  }
}

void linear_emb_backward(const float* x, const float* W, const int32_t* emb, const float* dy, float* dx, float* dW,
                         float* db, int64_t N, int in, int out, int E) {
  EmbGroups& g = emb_workspace();
  group_rows(emb, N, E, g);
  std::vector<float>& xg = g.x;
  std::vector<float>& dyg = g.y;
  std::vector<float>& dxg = g.dx;
  for (int e = 0; e < E; ++e) {
    const int64_t n = g.start[e + 1] - g.start[e];
    if (n == 0) continue;
    const int64_t* rows = g.rows.data() + g.start[e];
    dyg.resize(n * out);
    gather_rows(dy, rows, n, out, dyg.data());
    if (dW) {
      xg.resize(n * in);
      gather_rows(x, rows, n, in, xg.data());
    }
    if (dx) dxg.assign(n * in, 0.0f);
    linear_backward(xg.data(), W + int64_t{e} * in * out, dyg.data(), dx ? dxg.data() : nullptr,
                    dW ? dW + int64_t{e} * in * out : nullptr, db ? db + int64_t{e} * out : nullptr, n, in, out);
    if (dx) scatter_add_rows(dxg.data(), rows, n, in, dx);
  }
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

const float* CpuOps::activation_input_gradient(Activation act, const View& pre, const View& dy) {
  if (act == Activation::none) return cf(dy);
  float* dpre = scratch(dy.size());
  cpu::activation_backward(act, cf(pre), cf(dy), dpre, dy.size());
  return dpre;
}

void CpuOps::linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                            const View& y) {
  fp32_contiguous(check_linear_forward(x, W, b, act, pre, y));
  cpu::linear_forward(cf(x), cf(W), cf(b), gemm_output(act, pre, y), x.rows, int(x.cols), int(W.cols));
  activation_epilogue(act, pre, y);
}

void CpuOps::linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                             const View& dx, const View& dW, const View& db) {
  fp32_contiguous(check_linear_backward(x, W, act, pre, dy, dx, dW, db));
  cpu::linear_backward(cf(x), cf(W), activation_input_gradient(act, pre, dy), f(dx), f(dW), f(db), x.rows,
                       int(x.cols), int(W.cols));
}

void CpuOps::linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                                const View& pre, const View& y) {
  fp32_contiguous(check_linear_emb_forward(x, W, b, emb, act, pre, y));
  cpu::linear_emb_forward(cf(x), cf(W), cf(b), emb.ids, gemm_output(act, pre, y), x.rows, int(x.cols),
                          int(W.cols), emb.n_emb);
  activation_epilogue(act, pre, y);
}

void CpuOps::linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                                 const View& dy, const View& dx, const View& dW, const View& db) {
  fp32_contiguous(check_linear_emb_backward(x, W, emb, act, pre, dy, dx, dW, db));
  cpu::linear_emb_backward(cf(x), cf(W), emb.ids, activation_input_gradient(act, pre, dy), f(dx), f(dW), f(db),
                           x.rows, int(x.cols), int(W.cols), emb.n_emb);
}

}  // namespace emb
