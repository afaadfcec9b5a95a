// Flow matching (MODEL.md "Flow"), the GPU twin of kernels/cpu/flow_loss.hpp: the
// interpolation of noise and data that forms the model's input, and the MSE of the predicted
// velocity with an optional 0/1 mask, rows of the prediction mapped to target rows and output
// columns to target columns by index arrays (null = identity). Storage fp32 or bf16, t fp32.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

// y[r] = (1 − s)·u[i] + s·w[i], s = t[t_rows[r]], i = src_rows ? src_rows[r] : r; [n, C] with
// row strides ld_u, ld_w, ld_y
template <class T>
void flow_interpolate(const T* u, int64_t ld_u, const T* w, int64_t ld_w, const int32_t* src_rows, const float* t,
                      const int32_t* t_rows, T* y, int64_t ld_y, int64_t n, int64_t C, cudaStream_t stream);

// Over pred [n, C] and targets [*, Ct] (tr = target_rows ? target_rows[r] : r, tc = target_cols
// ? target_cols[c] : c): diff = pred − (plus − minus); *sum = Σ w_r·m·diff² (device double; one
// block, a fixed order: deterministic, not the CPU's sequential order);
// dpred = 2·weight·w_r·m·diff / denominator (written, when dpred is not null); m = mask[tr, tc]
// or 1, w_r = row_weight[r] (fp32) or 1.
template <class T>
void mse_loss(const T* pred, const T* plus, const T* minus, const T* mask, const float* row_weight,
              const int32_t* target_rows, const int32_t* target_cols, int64_t Ct, double denominator, double weight,
              T* dpred, double* sum, int64_t n, int64_t C, cudaStream_t stream);

}  // namespace emb::cuda
