// HF's rotate-half RoPE frequency table (kernels/ops.hpp rope_half_forward), shared by every
// backend's rope_half.
#pragma once
#include <cmath>
#include <vector>

namespace emb {

// inv_freq_i = float32(1 / float32(θ^float32(2i/hd))) for i < hd/2 (kernels/cpu/rope_half.hpp
// says why θ^e is formed in double): the table every backend computes the same way; inline, since
// kernels/cuda's standalone build uses it too.
inline std::vector<float> rope_half_inv_freq(int hd, float theta) {
  std::vector<float> inv(static_cast<size_t>(hd / 2));
  for (int i = 0; i < hd / 2; ++i) {
    const float exponent = float(2 * i) / float(hd);
    inv[size_t(i)] = 1.0f / float(std::pow(double(theta), double(exponent)));
  }
  return inv;
}

}  // namespace emb
