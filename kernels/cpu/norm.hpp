// LayerNorm (eps the caller's) and RMSNorm (eps 1e-6) over the last dim (MODEL.md). The forward
// saves the per-row statistics the backward needs, so the backward never recomputes reductions.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

constexpr float kNormEps = kRmsNormEps;  // RMSNorm's

// y = (x - mean) * rstd * weight + bias, rstd = 1/sqrt(var + eps); weight/bias null means no affine.
// mean[N], rstd[N] are saved for the backward. Row statistics are reduced in double.
void layernorm_forward(const float* x, const float* weight, const float* bias, float* y, float* mean, float* rstd,
                       int64_t N, int C, float eps);
void layernorm_backward(const float* x, const float* weight, const float* mean, const float* rstd, const float* dy,
                        float* dx, float* dweight, float* dbias, int64_t N, int C);

// y = x * rstd * weight, rstd = 1/sqrt(mean(x²) + eps); saves rstd[N]. weight null means none.
void rmsnorm_forward(const float* x, const float* weight, float* y, float* rstd, int64_t N, int C);
void rmsnorm_backward(const float* x, const float* weight, const float* rstd, const float* dy, float* dx,
                      float* dweight, int64_t N, int C);

}  // namespace emb::cpu
