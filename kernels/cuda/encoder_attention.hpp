// The frozen encoders' attention on the GPU (kernels/ops.hpp encoder_attention_forward), the
// twin of kernels/cpu/encoder_attention.hpp: variable-length segments, grouped-query heads,
// causal or bidirectional, a scale and an optional additive bias (dense per segment, or a
// per-head table read through a relative-position bucket map). Storage fp32 or bf16, all math
// fp32 (softmax included), forward only.
//
// First version, correctness first: SIMT flash attention. A block owns a tile of query rows of
// one segment and one head; its threads hold their row's q and output in registers (LANES
// threads per row, each every LANES-th dim); K and V tiles of the segment's keys stream through
// shared memory with an online softmax. Head dims 8, 16, 32, 64, 72 (SigLIP), 80 (CLIP), 128
// (Qwen3, umT5 uses 64), 384 and 640 (the Wan2.1 and Wan2.2 VAEs' single-head attention; 16
// lanes per row, 8-key tiles). What would make it fast: the tensor-core tiles of attention_mma.cu / attention_wgmma.cu
// at these head dims (72 and 80 pad to 80 and 96 for mma k16 steps) — SigLIP attention is ~4% of
// its FLOPs, so the GEMMs dominate first.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cuda {

inline constexpr int kEncoderAttentionHeadDims[] = {8, 16, 32, 64, 72, 80, 128, 384, 640};
constexpr bool encoder_attention_head_dim_built(int hd) {
  for (int built : kEncoderAttentionHeadDims)
    if (hd == built) return true;
  return false;
}
// "8, 16, 32, 64, 72, 80, 128, 384, 640", for messages.
const char* encoder_attention_head_dims_text();

// Bytes of device workspace for the tile list of `segments` (host memory).
size_t encoder_attention_workspace_bytes(const AttnSegments& segments, int head_dim);

// q, k, v with row strides ld_q, ld_k, ld_v; out [Tq, Hq·hd] contiguous; lse [Tq, Hq] or null;
// bias null, dense [Hq·Lq, Lk] or a [Hq, n_buckets] table (bias_kind.buckets on the device).
// The caller checked the shapes (ops_check) and the head dim.
template <class T>
void encoder_attention_forward(const T* q, int64_t ld_q, const T* k, int64_t ld_k, const T* v, int64_t ld_v,
                               const T* bias, int64_t n_buckets, const AttnBias& bias_kind, T* out, float* lse,
                               const EncoderAttnConfig& cfg, const AttnSegments& segments, void* workspace,
                               cudaStream_t stream);

}  // namespace emb::cuda
