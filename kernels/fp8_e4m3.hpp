// The FP8 E4M3 format of the FP8 GEMM path (OCP FP8, NVIDIA's __nv_fp8_e4m3): sign, 4 exponent
// bits with bias 7, 3 mantissa bits; no infinities, NaN is S.1111.111, the largest finite value
// is 1.75·2⁸ = 448 and the smallest subnormal 2⁻⁹. Encoding rounds to nearest, ties to even,
// and saturates to ±448 (infinities included), as the satfinite conversions cuBLASLt and
// Transformer Engine quantise with; NaN of either sign becomes the NaN code 0x7f, as
// cuda_fp8.h's __nv_cvt_float_to_fp8 gives it.
#pragma once
#include <cstdint>

namespace emb {

constexpr float kE4M3Max = 448.0f;
constexpr uint8_t kE4M3NaN = 0x7f;  // 0xff decodes to NaN too

uint8_t encode_e4m3(float x);
float decode_e4m3(uint8_t code);

}  // namespace emb
