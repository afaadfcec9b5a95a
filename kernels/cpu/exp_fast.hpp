// e^x without a libm call, so softmax loops over it auto-vectorise: e^x = 2^n·p(r) with
// x = n·ln2 + r, |r| ≤ ln2/2 (Cody–Waite split of ln2) and p the degree-7 Taylor polynomial
// (truncation < 1e-8 relative, so the result is within ~2 ulp of expf). Inputs below −87.3
// (including −∞, a masked score) give exactly 0; inputs above 88 are clamped.
// The loops vectorise only under -fno-trapping-math (kernels/cpu/CMakeLists.txt).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace emb::cpu {

inline float exp_fast(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // few mantissa bits: n·kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kMin = -87.3f;
  const float xc = std::min(std::max(x, kMin), 88.0f);
  const float n = std::floor(xc * kLog2e + 0.5f);
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  return x < kMin ? 0.0f : p * two_n;
}

}  // namespace emb::cpu
