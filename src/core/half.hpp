// IEEE 754 binary16 ("float16"): the storage type of precomputed features and latents in
// packed files (numpy's float16, what h5py writes) and an element type of released checkpoints
// (safetensors "F16"). Conversion is exact on the way out and rounds to nearest-even on the way
// in (what torch's .half() computes); NaN stays NaN, overflow becomes infinity; math is fp32.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#ifdef __F16C__
#include <immintrin.h>
#endif

namespace emb {

inline float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal half: value = man * 2^-24
    float f = std::ldexp(float(man), -24);
    return sign ? -f : f;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// n values; F16C (x86-64-v3 builds) converts 8 per instruction, exactly like half_to_float
// for every finite value and infinity.
inline void half_to_float(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
#ifdef __F16C__
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
#endif
  for (; i < n; ++i) out[i] = half_to_float(in[i]);
}

inline uint16_t float_to_half(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t absu = u & 0x7fffffffu;
  if (absu >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u));
  if (absu >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: overflow
  if (absu < 0x38800000u) {                                  // below the smallest normal half
    float a;
    std::memcpy(&a, &absu, 4);
    return uint16_t(sign | uint16_t(std::nearbyint(a * 16777216.0f)));  // multiples of 2^-24
  }
  uint32_t rounded = absu + 0xfffu + ((absu >> 13) & 1u);  // nearest, ties to even
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

}  // namespace emb
