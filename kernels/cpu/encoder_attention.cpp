#include "kernels/cpu/encoder_attention.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/exp_fast.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/cpu/serial_blas_scope.hpp"

namespace emb::cpu {

namespace {

constexpr int kQueryTile = 64;

// One task: query rows [i0, i0 + bq) of segment s (local index i0 - q_begin), head h.
struct Task {
  int64_t q_begin, k_begin, lq, lk, i0;
  int bq, h;
};

// scores[r, j] += the bias of local query i0 + r and local key j < n_keys, head h.
void add_bias(float* scores, int64_t ld, int64_t n_keys, const Task& t, const float* bias, int64_t n_buckets,
              const AttnBias& kind) {
  const int64_t i_local = t.i0 - t.q_begin;
  for (int r = 0; r < t.bq; ++r) {
    float* s = scores + r * ld;
    const int64_t i = i_local + r;
    if (kind.kind == AttnBiasKind::dense) {
      const float* row = bias + (int64_t(t.h) * t.lq + i) * t.lk;
      for (int64_t j = 0; j < n_keys; ++j) s[j] += row[j];
    } else {
      const float* table = bias + int64_t(t.h) * n_buckets;
      for (int64_t j = 0; j < n_keys; ++j)
        s[j] += table[kind.buckets[std::clamp<int64_t>(j - i + kind.rel_zero, 0, kind.n_rel - 1)]];
    }
  }
}

void run_task(StridedRows q, StridedRows k, StridedRows v, const float* bias, int64_t n_buckets,
              const AttnBias& bias_kind, float* out, float* lse, const EncoderAttnConfig& cfg, const Task& t,
              std::vector<float>& scores) {
  const int hd = cfg.head_dim, group = cfg.q_heads / cfg.kv_heads, kv = t.h / group;
  const int64_t ld_out = int64_t(cfg.q_heads) * hd;
  const int64_t i_local = t.i0 - t.q_begin;
  // Causal: local query i sees local keys j <= i + (lk - lq); the tile's last row bounds the GEMM.
  const int64_t n_keys = cfg.causal ? std::min<int64_t>(t.lk, i_local + t.bq + t.lk - t.lq) : t.lk;
  const int64_t ld_s = std::max<int64_t>(n_keys, 1);
  scores.resize(size_t(t.bq * ld_s));
  float* S = scores.data();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t.bq, int(n_keys), hd, cfg.scale,
              q.data + t.i0 * q.ld + int64_t(t.h) * hd, int(q.ld), k.data + t.k_begin * k.ld + int64_t(kv) * hd,
              int(k.ld), 0.0f, S, int(ld_s));
  if (bias_kind.kind != AttnBiasKind::none) add_bias(S, ld_s, n_keys, t, bias, n_buckets, bias_kind);
  for (int r = 0; r < t.bq; ++r) {
    float* s = S + r * ld_s;
    const int64_t visible = cfg.causal ? i_local + r + t.lk - t.lq + 1 : t.lk;
    float m = -INFINITY;
    for (int64_t j = 0; j < visible; ++j) m = std::max(m, s[j]);
    float sum = 0.0f;
    for (int64_t j = 0; j < visible; ++j) {
      s[j] = exp_fast(s[j] - m);
      sum += s[j];
    }
    std::fill(s + visible, s + n_keys, 0.0f);
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < visible; ++j) s[j] *= inv;
    if (lse) lse[(t.i0 + r) * cfg.q_heads + t.h] = m + std::log(sum);
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t.bq, hd, int(n_keys), 1.0f, S, int(ld_s),
              v.data + t.k_begin * v.ld + int64_t(kv) * hd, int(v.ld), 0.0f, out + t.i0 * ld_out + int64_t(t.h) * hd,
              int(ld_out));
}

}  // namespace

void encoder_attention_forward(StridedRows q, StridedRows k, StridedRows v, const float* bias, int64_t n_buckets,
                               const AttnBias& bias_kind, float* out, float* lse, const EncoderAttnConfig& cfg,
                               const AttnSegments& segments) {
  if (bias_kind.kind == AttnBiasKind::relative_buckets)
    for (int r = 0; r < bias_kind.n_rel; ++r)
      EMB_CHECK(bias_kind.buckets[r] >= 0 && bias_kind.buckets[r] < n_buckets, "encoder_attention_forward: bucket ",
                bias_kind.buckets[r], " of relative position ", r - bias_kind.rel_zero, " is outside the table's ",
                n_buckets, " buckets");
  const int64_t* qo = segments.q_offsets;
  const int64_t* ko = segments.k_offsets ? segments.k_offsets : segments.q_offsets;
  std::vector<Task> tasks;
  for (int s = 0; s < segments.n; ++s)
    for (int64_t i0 = qo[s]; i0 < qo[s + 1]; i0 += kQueryTile)
      for (int h = 0; h < cfg.q_heads; ++h)
        tasks.push_back(Task{qo[s], ko[s], qo[s + 1] - qo[s], ko[s + 1] - ko[s], i0,
                             int(std::min<int64_t>(kQueryTile, qo[s + 1] - i0)), h});
  const SerialBlasScope serial_blas;  // each task's GEMMs on its own OpenMP thread
  parallel_for_scratch<Schedule::dynamic>(
      int64_t(tasks.size()), true, [] { return std::vector<float>(); },
      [&](std::vector<float>& scores, int64_t n) {
        run_task(q, k, v, bias, n_buckets, bias_kind, out, lse, cfg, tasks[size_t(n)], scores);
      });
}

}  // namespace emb::cpu

// ---- CpuOps entry (kernels/ops.hpp) ----

namespace emb {

void CpuOps::encoder_attention_forward(const View& q, const View& k, const View& v, const View& bias,
                                       const AttnBias& bias_kind, const View& out, const View& lse,
                                       const EncoderAttnConfig& cfg, const AttnSegments& segments) {
  fp32(check_encoder_attention(q, k, v, bias, bias_kind, out, lse, cfg, segments));
  cpu::encoder_attention_forward({cf(q), q.ld}, {cf(k), k.ld}, {cf(v), v.ld}, cf(bias), bias.cols, bias_kind, f(out),
                                 f(lse), cfg, segments);
}

}  // namespace emb
