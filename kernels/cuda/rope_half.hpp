// HF's rotate-half rotary embedding on the GPU (kernels/ops.hpp rope_half_forward), the twin of
// kernels/cpu/rope_half.hpp: pairs (i, i + hd/2), inv_freq_i from the same float32 table
// (kernels/rope_half_inv_freq.hpp, uploaded per call), angle = float32(pos · inv_freq_i), cos and sin
// of it in double rounded to float (equal to the CPU's). The backward rotates by −angle.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace emb::cuda {

// Bytes of device workspace (the inv_freq table).
size_t rope_half_workspace_bytes(int hd);

// x [T, H·hd] rotated in place at positions pos [T] (device); direction +1 forward, −1 backward.
template <class T>
void rope_half(T* x, const int32_t* pos, int64_t T_, int H, int hd, float theta, float direction, void* workspace,
               cudaStream_t stream);

}  // namespace emb::cuda
