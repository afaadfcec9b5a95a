#include "weights/weight_dtype.hpp"

#include <cmath>
#include <cstring>

#include "core/dtype.hpp"
#include "core/error.hpp"

namespace emb {

namespace {

struct DTypeRow {
  WeightDType type;
  const char* name;
  size_t size;
};

constexpr DTypeRow kTypes[] = {
    {WeightDType::BOOL, "BOOL", 1}, {WeightDType::U8, "U8", 1},     {WeightDType::I8, "I8", 1},
    {WeightDType::F8_E5M2, "F8_E5M2", 1}, {WeightDType::F8_E4M3, "F8_E4M3", 1}, {WeightDType::I16, "I16", 2},
    {WeightDType::U16, "U16", 2},   {WeightDType::F16, "F16", 2},   {WeightDType::BF16, "BF16", 2},
    {WeightDType::I32, "I32", 4},   {WeightDType::U32, "U32", 4},   {WeightDType::F32, "F32", 4},
    {WeightDType::F64, "F64", 8},   {WeightDType::I64, "I64", 8},   {WeightDType::U64, "U64", 8},
};

const DTypeRow& row(WeightDType t) { return kTypes[static_cast<int>(t)]; }

// IEEE binary16 to binary32; exact for every value (subnormals scale by 2^-24).
float half_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  const uint32_t bits = sign | (exponent == 0x1f ? 0x7f800000u | (mantissa << 13)
                                                 : ((exponent + 112u) << 23) | (mantissa << 13));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// binary32 to binary16, round to nearest even (what torch's .half() computes).
uint16_t float_to_half_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return uint16_t(sign | 0x7e00u);  // NaN
  if (magnitude >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past 65504: infinity
  if (magnitude < 0x38800000u) {  // below 2^-14: a multiple of 2^-24, nearbyint rounds ties to even
    float a;
    std::memcpy(&a, &magnitude, 4);
    return uint16_t(sign | uint16_t(std::nearbyint(a * 16777216.0f)));
  }
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

}  // namespace

size_t weight_dtype_size(WeightDType t) { return row(t).size; }
const char* weight_dtype_name(WeightDType t) { return row(t).name; }

std::optional<WeightDType> parse_weight_dtype(const std::string& name) {
  for (const DTypeRow& r : kTypes)
    if (name == r.name) return r.type;
  return std::nullopt;
}

bool converts_to_float(WeightDType t) {
  return t == WeightDType::F32 || t == WeightDType::BF16 || t == WeightDType::F16;
}

void decode_to_float(WeightDType t, const void* src, int64_t n, float* out) {
  const auto* bytes = static_cast<const unsigned char*>(src);
  if (t == WeightDType::F32) {
    std::memcpy(out, bytes, size_t(n) * 4);
    return;
  }
  EMB_ASSERT(t == WeightDType::BF16 || t == WeightDType::F16);
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, bytes + 2 * i, 2);
    out[i] = t == WeightDType::BF16 ? to_float(bf16{h}) : half_bits_to_float(h);
  }
}

void encode_from_float(WeightDType t, const float* src, int64_t n, void* dst) {
  auto* bytes = static_cast<unsigned char*>(dst);
  if (t == WeightDType::F32) {
    std::memcpy(bytes, src, size_t(n) * 4);
    return;
  }
  EMB_ASSERT(t == WeightDType::BF16 || t == WeightDType::F16);
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t h = t == WeightDType::BF16 ? to_bf16(src[i]).bits : float_to_half_bits(src[i]);
    std::memcpy(bytes + 2 * i, &h, 2);
  }
}

}  // namespace emb
