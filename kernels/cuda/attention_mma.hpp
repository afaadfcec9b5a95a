// Varlen multi-head attention on tensor cores for bf16 storage (fp32 accumulate), the
// FlashAttention-2 design on mma.sync m16n8k16: same API, masks, layouts, workspace
// (attention_workspace_bytes) and conventions as attention.hpp, whose SIMT kernels stay the
// fp32 path and the fallback for tensors this one does not take.
//
// Forward: a block of 4 warps owns 64 query rows of one head (16 per warp); key/value tiles of
// 64 rows stream through a 2-stage cp.async pipeline into padded shared memory; S = Q·Kᵀ and
// O += P·V on mma with ldmatrix operands, the online softmax in registers (P reused as the A
// operand in bf16), lse saved. Backward (deterministic, no atomics): D = rowsum(dout ∘ out),
// then a key-major kernel (dK, dV of 64 keys per block, query tiles streamed) and a
// query-major one (dQ of 64 queries per block, key tiles streamed), each recomputing P from
// lse; gradients accumulate (+=). Tile pairs with no allowed pair (attention_tiles.hpp's
// summaries) are never loaded.
//
// Requirements: q, k, v, out, dout, dq, dk, dv 16-byte aligned (cp.async copies 16 bytes;
// rows of H·hd bf16 keep that alignment since hd is a multiple of 8), head dims 48, 64, 128.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>

#include "kernels/cuda/attention.hpp"

namespace emb::cuda {

// True when every pointer is 16-byte aligned (null counts as aligned).
inline bool attention_mma_aligned(std::initializer_list<const void*> tensors) {
  for (const void* p : tensors)
    if (reinterpret_cast<uintptr_t>(p) % 16) return false;
  return true;
}

// keyless: as attention_forward's (attention.hpp).
void attention_mma_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                           __nv_bfloat16* out, float* lse, int64_t Tq, int64_t Tk, int H, int hd,
                           const AttnIndex& idx, void* workspace, cudaStream_t stream,
                           unsigned long long* keyless = nullptr);
// The head dims the tensor-core kernels are built for.
constexpr bool attention_mma_head_dim_built(int hd) { return hd == 48 || hd == 64 || hd == 128; }
// dq += ..., dk += ..., dv += ... (accumulating).
void attention_mma_backward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                            const __nv_bfloat16* out, const float* lse, const __nv_bfloat16* dout, __nv_bfloat16* dq,
                            __nv_bfloat16* dk, __nv_bfloat16* dv, int64_t Tq, int64_t Tk, int H, int hd,
                            const AttnIndex& idx, void* workspace, cudaStream_t stream);

}  // namespace emb::cuda
