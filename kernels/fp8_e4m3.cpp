#include "kernels/fp8_e4m3.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace emb {

uint8_t encode_e4m3(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const auto sign = uint8_t((bits >> 24) & 0x80u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return kE4M3NaN;
  const float a = std::fabs(x);
  if (a >= kE4M3Max) return sign | 0x7e;
  // Below 2⁻⁶ E4M3 is subnormal: the multiples of 2⁻⁹. The product is exact and below 8, so
  // rounding it (ties to even, the default mode) gives the code; 8 is the code of 2⁻⁶.
  if (a < 0x1p-6f) return sign | uint8_t(std::nearbyint(a * 512.0f));
  // Normal: keep 3 of fp32's 23 mantissa bits, the 20 dropped rounded to nearest even. A carry
  // out of the mantissa lands in the exponent, which is the correctly rounded next binade; it
  // never reaches the NaN code because a < 448 rounds to 448 at most.
  const uint32_t rounded = magnitude + 0x7ffffu + ((magnitude >> 20) & 1u);
  const uint32_t exponent = (rounded >> 23) - (127 - 7);
  return sign | uint8_t((exponent << 3) | ((rounded >> 20) & 7u));
}

float decode_e4m3(uint8_t code) {
  const int exponent = (code >> 3) & 0xf, mantissa = code & 7;
  if (exponent == 0xf && mantissa == 7) return std::numeric_limits<float>::quiet_NaN();
  const float sign = (code & 0x80) ? -1.0f : 1.0f;
  if (exponent == 0) return sign * std::ldexp(float(mantissa), -9);
  return sign * std::ldexp(float(8 + mantissa), exponent - 10);  // (1 + m/8)·2^(e−7)
}

}  // namespace emb
