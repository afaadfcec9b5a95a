// AdamW (Loshchilov & Hutter): decoupled weight decay, bias correction, and global-norm
// gradient clipping (its coefficient: clip_coefficient, kernels/op_types.hpp). Operates on flat
// fp32 shards.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

using emb::AdamWConfig;  // kernels/op_types.hpp

// Σ g² over n elements, in double so the global norm does not depend on the shard split.
double sum_squares(const float* g, int64_t n);

// One AdamW step at 1-based `step`; `grad_scale` multiplies g first (clipping, 1/accum).
// decay = 0 for parameters excluded from weight decay (norms, biases).
void adamw_step(float* param, const float* grad, float* m, float* v, int64_t n, const AdamWConfig& cfg,
                int64_t step, float grad_scale, float decay_mult);

}  // namespace emb::cpu
