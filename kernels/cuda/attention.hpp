// Varlen multi-head flash attention on packed sequences, the GPU twin of
// kernels/cpu/attention.hpp (same masks, layouts and conventions; AttnIndex pointers are device
// pointers here). q [Tq, H*hd], k, v [Tk, H*hd], out [Tq, H*hd], lse [Tq, H] (fp32, natural
// log of Σ exp(q·k/√hd) over allowed keys; −inf for rows with none, whose output is 0).
// Storage fp32 or bf16, all math fp32; head dims 48, 64, 128.
//
// First version, correctness first: SIMT tiles of 32 queries × 32 keys in shared memory, four
// threads per row (each owns every fourth dim), online softmax, and a per-tile summary pass
// that lets every block skip tile pairs with no allowed pair. The backward is two
// deterministic kernels (dk/dv key-major, dq query-major; no atomics) after a pass that forms
// D = rowsum(dout ∘ out). What would make it fast on Hopper: wgmma tensor-core tiles of 64+ rows
// fed by TMA into a 2–3 stage mbarrier pipeline with warp specialisation (producer warp,
// consumer warpgroups), bf16 P in registers, and the key-tile range of each query tile taken
// from the summaries instead of a scan.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/cuda/attention_tiles.hpp"

namespace emb::cuda {

// The head dims the kernels are built for: the presets' 48 (GR00T-N1.5), 64 and 128 (DreamZero),
// train.tune_visual's 72 (SigLIP) and 128 (Qwen3), and the small ones of the tiny test models
// (8, 16, 32).
inline constexpr int kAttentionHeadDims[] = {8, 16, 32, 48, 64, 72, 128};
constexpr bool attention_head_dim_built(int hd) {
  for (int built : kAttentionHeadDims)
    if (hd == built) return true;
  return false;
}
// "8, 16, 32, 48, 64, 72, 128", for messages.
const char* attention_head_dims_text();

// Bytes of device workspace the forward and backward need (tile summaries, D).
size_t attention_workspace_bytes(int64_t Tq, int64_t Tk, int H);

// A real query row with no allowed key is the CPU's error (MODEL.md). With `keyless` null the
// forward checks at once (an 8-byte copy and a stream synchronisation per call); otherwise it
// records the first such row into *keyless (device memory, kNoKeylessRow = none) without
// synchronising, and the caller reads it once later (keyless_row_error).
template <class T>
void attention_forward(const T* q, const T* k, const T* v, T* out, float* lse, int64_t Tq, int64_t Tk, int H, int hd,
                       const AttnIndex& idx, void* workspace, cudaStream_t stream,
                       unsigned long long* keyless = nullptr);
inline constexpr unsigned long long kNoKeylessRow = ~0ull;
// The error for a value attention_forward recorded ("" for kNoKeylessRow).
std::string keyless_row_error(unsigned long long recorded);
// dq += ..., dk += ..., dv += ... (accumulating, like every backward).
template <class T>
void attention_backward(const T* q, const T* k, const T* v, const T* out, const float* lse, const T* dout, T* dq, T* dk,
                        T* dv, int64_t Tq, int64_t Tk, int H, int hd, const AttnIndex& idx, void* workspace,
                        cudaStream_t stream);

}  // namespace emb::cuda
