// The attention implementations as types with one API (static forward / backward taking the
// arguments of attention.hpp, workspace_bytes, and whether the backward is deterministic), so
// that the tests and benchmarks run the same code on each: the SIMT kernels (attention.hpp; fp32
// and bf16) and the tensor-core ones (attention_mma.hpp; bf16 only), and the Hopper ones
// (attention_wgmma.hpp; sm_90a) with either dQ accumulation.
#pragma once
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/attention_mma.hpp"
#include "kernels/cuda/attention_wgmma.hpp"

namespace emb::cuda::testing {

// What the SIMT and mma.sync implementations share: attention.hpp's workspace, no atomics.
struct DeterministicAttention {
  static constexpr bool deterministic = true;
  static size_t workspace_bytes(int64_t Tq, int64_t Tk, int H, int) { return attention_workspace_bytes(Tq, Tk, H); }
};

struct SimtAttention : DeterministicAttention {
  static constexpr const char* name = "attention";
  static constexpr int head_dims[] = {8, 16, 48, 64, 128};  // tested (kAttentionHeadDims less 32)
  template <class... Args>
  static void forward(Args... args) {
    attention_forward(args...);
  }
  template <class... Args>
  static void backward(Args... args) {
    attention_backward(args...);
  }
};

struct MmaAttention : DeterministicAttention {
  static constexpr const char* name = "attention_mma";
  static constexpr int head_dims[] = {48, 64, 128};  // attention_mma_head_dim_built
  template <class... Args>
  static void forward(Args... args) {
    attention_mma_forward(args...);
  }
  template <class... Args>
  static void backward(Args... args) {
    attention_mma_backward(args...);
  }
};

template <DqAccumulation ACCUMULATION>
struct WgmmaAttentionWith {
  static constexpr bool deterministic = ACCUMULATION == DqAccumulation::deterministic;
  static constexpr const char* name = deterministic ? "attention_wgmma" : "attention_wgmma atomic dq";
  static constexpr int head_dims[3] = {48, 64, 128};  // sized: nvcc's range-for needs it in a template
  static size_t workspace_bytes(int64_t Tq, int64_t Tk, int H, int hd) {
    return attention_wgmma_workspace_bytes(Tq, Tk, H, hd, ACCUMULATION);
  }
  template <class... Args>
  static void forward(Args... args) {
    attention_wgmma_forward(args...);
  }
  template <class... Args>
  static void backward(Args... args) {
    attention_wgmma_backward(args..., ACCUMULATION);
  }
};
using WgmmaAttention = WgmmaAttentionWith<DqAccumulation::deterministic>;
using WgmmaAtomicAttention = WgmmaAttentionWith<DqAccumulation::atomic>;

}  // namespace emb::cuda::testing
