// Flow matching (MODEL.md "Flow"): the interpolation of noise and data that forms the model's
// input, and the MSE of the predicted velocity, with an optional 0/1 mask. Rows of the
// prediction map to rows of the per-sample or per-token targets through index arrays, and
// output columns to target columns (wan's head may predict a subset of the input channels).
#pragma once
#include <cstdint>

namespace emb::cpu {

// y[r] = (1 − s)·u[i] + s·w[i], s = t[t_rows[r]], i = src_rows ? src_rows[r] : r; [n, C], contiguous
void flow_interpolate(const float* u, const float* w, const int32_t* src_rows, const float* t, const int32_t* t_rows,
                      float* y, int64_t n, int64_t C);

// Over pred [n, C] and targets [*, Ct] (target row tr = target_rows ? target_rows[r] : r,
// column tc = target_cols ? target_cols[c] : c):
//   diff = pred − (plus − minus),  returns Σ m·diff² in double (row order),
//   dpred = 2·weight·m·diff / denominator when dpred is not null (written)
// with m = mask[tr, tc] (1 when mask is null).
double mse_loss(const float* pred, const float* plus, const float* minus, const float* mask, const int32_t* target_rows,
                const int32_t* target_cols, int64_t Ct, double denominator, double weight, float* dpred, int64_t n,
                int64_t C);

}  // namespace emb::cpu
