// The varlen attention forward on Hopper (sm_90a): wgmma and TMA, FlashAttention-3 style warp
// specialisation. Same API, masks, layouts, workspace and results (within the bf16 tolerance)
// as attention_mma_forward (attention_mma.hpp), whose backward stays the backward of both.
//
// A block is two consumer warpgroups (4 warps and 64 query rows each: 128 rows of one head, 16
// per warp) and one producer warp. The producer loads Q once and streams the allowed 64-key
// tiles of K and V (tile skipping as attention_mma, over the block's 128 rows) by TMA into a
// 2-stage ring of shared memory (no-swizzle core matrix layout) that both warpgroups read,
// signalled by per-stage "full" mbarriers (transaction bytes) and released by "empty" mbarriers
// each consumer warp arrives on once its wgmma reading the stage has retired. Each warpgroup
// computes S = Q·Kᵀ of its rows (wgmma, both operands from shared memory), the online softmax in
// registers, and O += P·V (wgmma, P from registers as bf16, V N-major from shared memory), then
// writes out and lse. FA3's ping-pong: the warpgroups take turns (an mbarrier each) to issue
// S, so that one's softmax runs under the other's wgmma; there is no overlap inside a warpgroup
// (each wgmma group is waited for at once).
//
// Requirements: those of attention_mma (bf16, 16-byte aligned tensors, hd 48, 64, 128) and a
// device of compute capability 9.0 (attention_wgmma_available).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/attention.hpp"

namespace emb::cuda {

// True when device `device` runs the sm_90a kernels (an H100/H200: compute capability 9.x;
// the emulation reports 9.0).
bool attention_wgmma_available(int device);

// Whether CudaOps runs its bf16 attention forwards here rather than on attention_mma: on a
// device where attention_wgmma_available, unless the environment variable EMBTRAIN_CUDA_WGMMA
// is "0" (the mma.sync forward, e.g. to compare both through the same suite); "1" requires it
// (an error on other devices).
bool attention_wgmma_selected(int device);

// keyless: as attention_forward's (attention.hpp).
void attention_wgmma_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                             __nv_bfloat16* out, float* lse, int64_t Tq, int64_t Tk, int H, int hd,
                             const AttnIndex& idx, void* workspace, cudaStream_t stream,
                             unsigned long long* keyless = nullptr);

}  // namespace emb::cuda
