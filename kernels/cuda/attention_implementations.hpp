// The attention implementations as types with one API (static forward / backward taking the
// arguments of attention.hpp), so that the tests and benchmarks run the same code on each:
// the SIMT kernels (attention.hpp; fp32 and bf16) and the tensor-core ones (attention_mma.hpp;
// bf16 only), and the Hopper ones (attention_wgmma.hpp; sm_90a).
#pragma once
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/attention_mma.hpp"
#include "kernels/cuda/attention_wgmma.hpp"

namespace emb::cuda::testing {

struct SimtAttention {
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

struct MmaAttention {
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

struct WgmmaAttention {
  static constexpr const char* name = "attention_wgmma";
  static constexpr int head_dims[] = {48, 64, 128};
  template <class... Args>
  static void forward(Args... args) {
    attention_wgmma_forward(args...);
  }
  template <class... Args>
  static void backward(Args... args) {
    attention_wgmma_backward(args...);
  }
};

}  // namespace emb::cuda::testing
