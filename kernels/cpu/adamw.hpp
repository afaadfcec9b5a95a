// AdamW (Loshchilov & Hutter): decoupled weight decay, bias correction, and global-norm
// gradient clipping. Operates on flat fp32 shards.
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

// The clip coefficient for a global norm: min(1, max_norm / (norm + 1e-6)); max_norm <= 0 disables.
float clip_coefficient(double global_norm, float max_norm);

}  // namespace emb::cpu
