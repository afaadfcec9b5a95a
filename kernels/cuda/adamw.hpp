// Fused multi-tensor AdamW with global-norm clipping, the GPU twin of kernels/cpu/adamw.hpp.
// Master parameters and moments are fp32; gradients are fp32 or bf16; an optional bf16 copy
// of each updated parameter is written in the same pass (the compute weights of the next step).
// One launch covers up to kAdamWTensorsPerLaunch tensors (descriptors travel as a kernel
// argument); longer lists take several launches.
//
// Clipping without a host round trip: global_sum_squares leaves Σ g² in a device double
// (all-reduce it across ranks when shards are split), and adamw_step reads it there:
//   norm = sqrt(Σ g²)·grad_scale,  clip = min(1, max_norm/(norm + 1e-6))  (max_norm ≤ 0: 1),
//   g ← grad·grad_scale·clip, then the update of kernels/cpu/adamw.hpp.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cuda {

constexpr int kAdamWTensorsPerLaunch = 32;
constexpr int kSumSquaresBlocksPerTensor = 64;
// Doubles of workspace global_sum_squares needs: the total, then the per-block partials.
constexpr int64_t kSumSquaresWorkspace = 1 + int64_t(kAdamWTensorsPerLaunch) * kSumSquaresBlocksPerTensor;

template <class G>
struct AdamWTensor {
  float* param = nullptr;
  const G* grad = nullptr;
  float* m = nullptr;
  float* v = nullptr;
  __nv_bfloat16* param_bf16 = nullptr;  // optional compute copy of param
  int64_t n = 0;
  float decay_mult = 1.0f;  // 0 for parameters excluded from weight decay
};

// workspace[0] = Σ over all tensors of Σ g² (double, deterministic for a given tensor list).
template <class G>
void global_sum_squares(const AdamWTensor<G>* tensors, int count, double* workspace, cudaStream_t stream);

// One AdamW step at 1-based `step` on every tensor; sum_squares (device, may be null: no clipping).
template <class G>
void adamw_step(const AdamWTensor<G>* tensors, int count, const AdamWConfig& cfg, int64_t step, float grad_scale,
                float max_norm, const double* sum_squares, cudaStream_t stream);

}  // namespace emb::cuda
