// Flow-matching MSE loss with an optional 0/1 mask (MODEL.md):
//   loss = Σ m·(pred − target)² / Σ m     (m = 1 everywhere when mask is null)
// gr00t uses the action mask; wan calls it once for video and once for actions (no mask) and
// weights the action term by λ_a in the backward. The reduction is one block in double, in a
// fixed order (deterministic; the loss is a once-per-step kernel of a few MB).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

// loss[0] = the masked mean; denom[0] = Σ m (saved for the backward). Both device scalars.
template <class T>
void mse_loss_forward(const T* pred, const T* target, const T* mask, float* loss, float* denom, int64_t n,
                      cudaStream_t stream);
// dpred += weight·2·m·(pred − target)/denom   (weight: upstream gradient of this loss term)
template <class T>
void mse_loss_backward(const T* pred, const T* target, const T* mask, const float* denom, float weight, T* dpred,
                       int64_t n, cudaStream_t stream);

}  // namespace emb::cuda
