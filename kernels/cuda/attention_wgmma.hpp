// The varlen attention on Hopper (sm_90a): wgmma and TMA, FlashAttention-3 style warp
// specialisation. Same API, masks, layouts, workspace and results (within the bf16 tolerance)
// as attention_mma (attention_mma.hpp).
//
// Every kernel's block is two consumer warpgroups (4 warps and 64 rows each: 128 rows of one
// head, 16 per warp) and a producer warpgroup, which gives its registers to the consumers
// (setmaxnreg) and whose first warp loads the block's resident tiles once and
// streams the allowed 64-row tiles of the other side (tile skipping as attention_mma, over the
// block's 128 rows) by TMA into a ring of shared memory (no-swizzle core matrix layout; 4 stages
// in the forward, 3 in the backward)
// that both warpgroups read, signalled by per-stage "full" mbarriers (transaction bytes) and
// released by "empty" mbarriers each consumer warp arrives on once its wgmma reading the stage
// has retired (attention_wgmma_ring.cuh); a warpgroup releases unread a tile its own 64 rows may
// not attend.
// Forward: Q resident, K and V streamed; each warpgroup computes S = Q·Kᵀ (wgmma, both operands
// from shared memory), the online softmax in registers, and O += P·V (wgmma, P from registers
// as bf16, V N-major from shared memory), then writes out and lse. FA3's ping-pong: the
// warpgroups take turns (an mbarrier each) to issue S, so that one's softmax runs under the
// other's wgmma; and FA3's intra-warpgroup overlap: a tile's P·V is issued after the next tile's
// S, whose softmax runs while that P·V is in flight (O is rescaled once it retired). The backward
// waits for each wgmma group at once.
// Backward (attention_wgmma_backward.cu): D = rowsum(dout ∘ out), then a key-major dK/dV kernel
// (K, V resident; Q, dO and the rows' lse and D streamed: Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ, so that Pᵀ
// and dSᵀ are already the register A operands of dV += Pᵀ·dO and dK += dSᵀ·Q), and dQ one of
// two ways (DqAccumulation). Gradients accumulate (+=).
//
// Requirements: those of attention_mma (bf16, 16-byte aligned tensors, hd 48, 64, 128) and a
// device of compute capability 9.0 (attention_wgmma_available).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/attention.hpp"

namespace emb::cuda {

// True when device `device` runs the sm_90a kernels (an H100/H200: compute capability 9.x;
// the emulation reports 9.0).
bool attention_wgmma_available(int device);

// Whether CudaOps runs its bf16 attention (forward and backward) here rather than on
// attention_mma: on a device where attention_wgmma_available, unless the environment variable
// EMBTRAIN_CUDA_WGMMA is "0" (the mma.sync kernels, e.g. to compare both through the same
// suite); "1" requires it (an error on other devices).
bool attention_wgmma_selected(int device);

// How the backward forms dQ.
enum class DqAccumulation {
  // A query-major dQ kernel (Q, dO resident; K, V streamed: S = Q·Kᵀ and dP = dO·Vᵀ again,
  // dS = P∘(dP − D), dQ += dS·K with dS from registers): no atomics, results bit-identical run to
  // run; 7 tile products per allowed pair.
  deterministic,
  // In the dK/dV kernel: its dS goes through shared memory into dQ = dS·K, which fp32 atomics sum
  // over the key blocks into the workspace, then dq += scale · that sum: 5 products per pair, but
  // the order of the sums, so dq's last bits, vary run to run (FA2, FA3 and cuDNN's default).
  atomic,
};

// Bytes of workspace the forward and a backward with `accumulation` need: attention_workspace_bytes
// and, for the atomic one, the fp32 dQ sums [Tq, H·hd] after it.
size_t attention_wgmma_workspace_bytes(int64_t Tq, int64_t Tk, int H, int hd, DqAccumulation accumulation);

// keyless: as attention_forward's (attention.hpp).
void attention_wgmma_forward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                             __nv_bfloat16* out, float* lse, int64_t Tq, int64_t Tk, int H, int hd,
                             const AttnIndex& idx, void* workspace, cudaStream_t stream,
                             unsigned long long* keyless = nullptr);
// dq += ..., dk += ..., dv += ... (accumulating; attention_wgmma_backward.cu).
void attention_wgmma_backward(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                              const __nv_bfloat16* out, const float* lse, const __nv_bfloat16* dout,
                              __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv, int64_t Tq, int64_t Tk, int H,
                              int hd, const AttnIndex& idx, void* workspace, cudaStream_t stream,
                              DqAccumulation accumulation);

}  // namespace emb::cuda
