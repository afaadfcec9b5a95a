// Inverted dropout over the rows of a packed batch (MODEL.md "Dropout"; the keep rule of
// kernels/dropout_keep.hpp). Nothing is stored between forward and backward: both draw the
// keep-mask from the counter RNG, so a backward, a recomputed forward and another backend all
// see the same mask.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

// y = x·keep/(1 − p) for x [N, C] (y may be x); rows with seq < 0 (padding) are copied.
void dropout_forward(const float* x, float* y, int64_t N, int C, const DropoutConfig& cfg, const DropoutRows& rows);
// dx += dy·keep/(1 − p); padding rows: dx += dy.
void dropout_backward(const float* dy, float* dx, int64_t N, int C, const DropoutConfig& cfg,
                      const DropoutRows& rows);

}  // namespace emb::cpu
