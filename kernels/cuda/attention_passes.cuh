// What the two varlen attention implementations (attention.cu: SIMT, fp32 and bf16;
// attention_mma.cu: tensor cores, bf16) share around their kernels: the workspace layout, the
// kernel parameters, the per-tile summaries pass, the check for real query rows without an
// allowed key after a forward, and the backward's pre-pass D = rowsum(dout ∘ out).
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "kernels/cuda/cuda_check.hpp"

#include "kernels/cuda/attention_tiles.hpp"

namespace emb::cuda {

// The index arrays of one side (queries or keys).
struct Side {
  const int32_t *seq, *blk, *grp;
  int64_t T;
  __device__ TokenIndex at(int64_t i) const { return token_at(seq, blk, grp, i, T); }
};

__host__ __device__ inline int64_t tiles_of(int64_t T) { return (T + kAttnTile - 1) / kAttnTile; }

// Workspace layout (attention_workspace_bytes): the first query row without an allowed key
// (forward), query summaries, key summaries, then D [Tq, H] (fp32, backward).
struct Workspace {
  unsigned long long* keyless_row;
  TileSummary* q_tiles;
  TileSummary* k_tiles;
  float* d;
};

Workspace carve_workspace(void* base, int64_t Tq, int64_t Tk);
// bytes rounded up to a multiple of 256, the alignment of each workspace part.
size_t align256(size_t bytes);

struct Params {
  int64_t Tq, Tk;
  int H;
  MaskRule mask;
  Side q_side, k_side;
  const TileSummary *q_tiles, *k_tiles;  // per kAttnTile tokens
  float scale;                           // 1/√hd
};

// Fills the parameters and launches the summaries of both sides (the caller checked hd).
Params summarize(const AttnIndex& idx, int64_t Tq, int64_t Tk, int H, int hd, const Workspace& w,
                 cudaStream_t stream);

// After a forward: a real query row without an allowed key (its lse is −inf) is the CPU's
// error. With `keyless` null it is thrown at once (an 8-byte copy and a stream
// synchronisation); otherwise it is recorded into *keyless (attention.hpp) without waiting.
void check_keyless_rows(const float* lse, const Params& p, const Workspace& w, cudaStream_t stream,
                        unsigned long long* keyless);

// D[i, h] = Σ_d dout·out (fp32), the backward's pre-pass.
template <class T>
void launch_attention_dot(const T* out, const T* dout, float* D, int64_t Tq, int H, int hd, cudaStream_t stream);

// A row that took no key (l = 0 at the end of the forward): without an allowed key its output
// is 0 and its lse −inf (padding; a real row is reported keyless); with allowed keys whose every
// score was −Inf (an overflowing activation or parameter) the row is NaN, a non-finite
// activation for train.nan_policy, as on the CPU.
__device__ __forceinline__ float empty_row_inverse_sum(bool allowed) { return allowed ? NAN : 0.0f; }
__device__ __forceinline__ float empty_row_lse(bool allowed) { return allowed ? NAN : -INFINITY; }

// max that propagates NaN (fmaxf drops it): a NaN score makes its row NaN, as on the CPU.
__device__ __forceinline__ float nan_max(float a, float b) { return b > a || b != b ? b : a; }

// Dynamic shared memory beyond 48 KiB needs the kernel's opt-in on a GPU.
template <class Kernel>
void allow_shared_bytes(Kernel* kernel, int bytes, const char* implementation) {
  check_cuda(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  bytes),
             str(implementation, " shared memory opt-in").c_str());
}

// Calls body(std::integral_constant<int, HD>) with HD = hd, one of an implementation's Dims;
// throws naming them for any other hd.
template <int... Dims, class Body>
void dispatch_head_dim(const char* implementation, int hd, Body body) {
  const bool built = ((hd == Dims ? (body(std::integral_constant<int, Dims>{}), true) : false) || ...);
  if (!built) {
    std::string dims;
    ((dims += (dims.empty() ? "" : ", ") + std::to_string(Dims)), ...);
    throw Error(str(implementation, ": head dim ", hd, " not built (", dims, ")"));
  }
}

}  // namespace emb::cuda
