#include "kernels/cpu/flow_loss.hpp"

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

void flow_interpolate(const float* u, int64_t ld_u, const float* w, int64_t ld_w, const int32_t* src_rows,
                      const float* t, const int32_t* t_rows, float* y, int64_t ld_y, int64_t n, int64_t C) {
  parallel_for(n, n * C >= (1 << 15), [=](int64_t r) {
    const float s = t[t_rows ? t_rows[r] : r];
    const int64_t i = src_rows ? src_rows[r] : r;
    for (int64_t c = 0; c < C; ++c) y[r * ld_y + c] = (1.0f - s) * u[i * ld_u + c] + s * w[i * ld_w + c];
  });
}

double mse_loss(const float* pred, const float* plus, const float* minus, const float* mask, const float* row_weight,
                const int32_t* target_rows, const int32_t* target_cols, int64_t Ct, double denominator, double weight,
                float* dpred, int64_t n, int64_t C) {
  double sum = 0;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t off = (target_rows ? target_rows[r] : r) * Ct;
    const double w_r = row_weight ? double(row_weight[r]) : 1.0;
    for (int64_t c = 0; c < C; ++c) {
      const int64_t e = off + (target_cols ? target_cols[c] : c);
      const float diff = pred[r * C + c] - (plus[e] - minus[e]);
      const double m = w_r * (mask ? double(mask[e]) : 1.0);
      sum += m * diff * diff;
      if (dpred) dpred[r * C + c] = float(2.0 * weight * m * diff / denominator);
    }
  }
  return sum;
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                              const RowIndex& t_rows, const View& y) {
  const OpCheck c = check_flow_interpolate(u, w, src_rows, t, t_rows, y);
  fp32(c), c.contiguous({{"t", &t}});
  cpu::flow_interpolate(cf(u), u.ld, cf(w), w.ld, src_rows.data, cf(t), t_rows.data, f(y), y.ld, y.rows, y.cols);
}

void CpuOps::mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                      const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg,
                      const View& dpred, double* sum) {
  fp32_contiguous(check_mse_loss(pred, plus, minus, mask, target_rows, target_cols, cfg, dpred, sum));
  *sum = cpu::mse_loss(cf(pred), cf(plus), cf(minus), cf(mask), cf(cfg.row_weight), target_rows.data, target_cols.data,
                       plus.cols,
                       cfg.denominator, cfg.weight, f(dpred), pred.rows, pred.cols);
}

}  // namespace emb
