// Storage dtypes. Math is always fp32 on the CPU; bf16 is a storage format (round to
// nearest even on the way in), as on GPUs where bf16 tensors accumulate in fp32.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace emb {

// f64 is for reductions only (Comm carries it: the global Σg² of gradient clipping).
enum class DType { f32, bf16, f64 };

inline size_t dtype_size(DType t) { return t == DType::f64 ? 8 : t == DType::f32 ? 4 : 2; }
inline const char* dtype_name(DType t) { return t == DType::f64 ? "fp64" : t == DType::f32 ? "fp32" : "bf16"; }

struct bf16 {
  uint16_t bits;
};

inline bf16 to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) return bf16{uint16_t((u >> 16) | 0x40)};  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return bf16{uint16_t(u >> 16)};
}

inline float to_float(bf16 h) {
  uint32_t u = uint32_t(h.bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace emb
