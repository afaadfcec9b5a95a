// The Wan VAE's channel RMS norm (its RMS_norm: F.normalize over the channels times √C and a
// per-channel gamma) with an optional SiLU after it (the residual blocks' norm → SiLU), per row
// of a channels-last [N, C] tensor. Forward only (the VAE is frozen).
#pragma once
#include <cstdint>

#include "kernels/op_types.hpp"

namespace emb::cpu {

// y = act(x / max(‖x‖₂, 1e-12) · √C · gamma), act none or silu; the norm in double; y may be x.
void channel_rmsnorm_forward(const float* x, const float* gamma, Activation act, float* y, int64_t N, int64_t C);

}  // namespace emb::cpu
