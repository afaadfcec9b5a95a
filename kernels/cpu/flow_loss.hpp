// Flow matching (MODEL.md "Flow"): the interpolation of noise and data that forms the model's
// input, and the MSE of the predicted velocity, with an optional 0/1 mask. Rows of the
// prediction map to rows of the per-sample or per-token targets through index arrays, and
// output columns to target columns (wan's head may predict a subset of the input channels).
#pragma once
#include <cstdint>

namespace emb::cpu {

// y[r] = (1 − s)·u[i] + s·w[i], s = t[t_rows[r]], i = src_rows ? src_rows[r] : r; [n, C] with
// row strides ld_u, ld_w, ld_y
void flow_interpolate(const float* u, int64_t ld_u, const float* w, int64_t ld_w, const int32_t* src_rows,
                      const float* t, const int32_t* t_rows, float* y, int64_t ld_y, int64_t n, int64_t C);

// Over pred [n, C] and targets [*, Ct] (target row tr = target_rows ? target_rows[r] : r,
// column tc = target_cols ? target_cols[c] : c):
//   diff = pred − (plus − minus),  returns Σ w_r·m·diff² in double (row order),
//   dpred = 2·weight·w_r·m·diff / denominator when dpred is not null (written)
// with m = mask[tr, tc] (1 when mask is null) and w_r = row_weight[r] (1 when it is null).
double mse_loss(const float* pred, const float* plus, const float* minus, const float* mask, const float* row_weight,
                const int32_t* target_rows, const int32_t* target_cols, int64_t Ct, double denominator, double weight,
                float* dpred, int64_t n, int64_t C);

}  // namespace emb::cpu
