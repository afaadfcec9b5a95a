#include "weights/weight_dtype.hpp"

#include <cstring>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/half.hpp"

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
    out[i] = t == WeightDType::BF16 ? to_float(bf16{h}) : half_to_float(h);
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
    const uint16_t h = t == WeightDType::BF16 ? to_bf16(src[i]).bits : float_to_half(src[i]);
    std::memcpy(bytes + 2 * i, &h, 2);
  }
}

}  // namespace emb
