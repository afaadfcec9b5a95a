// The frozen encoders' attention (kernels/ops.hpp encoder_attention_forward): variable-length
// segments (images, texts) in one call, grouped-query heads, causal or bidirectional, a scale
// and an optional additive bias (dense per segment, or a per-head table read through a
// relative-position bucket map). Forward only: the encoders are frozen.
//
// Per (segment, head, tile of 64 queries) the whole row of scores over the segment's keys is
// formed with one GEMM, biased and masked, and normalised with an exact softmax (max, exp, sum)
// before one GEMM with V: the segments are short (256 image tokens, a few hundred text tokens,
// a few thousand VAE pixels), so the [64, Lk] scores fit a thread's scratch, and no online
// rescaling rounds the result. OpenMP over the (segment, head, tile) tasks.
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

// One row-major operand with its row stride (a column chunk of a fused QKV output).
struct StridedRows {
  const float* data;
  int64_t ld;
};

// q [Tq, Hq·hd], k, v [Tk, Hkv·hd] → out [Tq, Hq·hd] (contiguous), lse [Tq, Hq] (may be null).
// bias: null, the dense [Hq·Lq, Lk] or the [Hq, n_buckets] table of bias_kind. The caller has
// checked the shapes (kernels/ops_check.hpp); the bucket values are checked here (host memory).
void encoder_attention_forward(StridedRows q, StridedRows k, StridedRows v, const float* bias, int64_t n_buckets,
                               const AttnBias& bias_kind, float* out, float* lse, const EncoderAttnConfig& cfg,
                               const AttnSegments& segments);

}  // namespace emb::cpu
