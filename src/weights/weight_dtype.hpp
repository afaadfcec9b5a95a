// Element types of tensors as checkpoint files store them, named as safetensors names them
// ("F32", "BF16"), so that a message about a .pth file and one about a .safetensors file
// read the same. Only F32, BF16 and F16 convert to float32 (the released weights use
// those); the others are listed and copied raw but never silently narrowed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace emb {

enum class WeightDType { BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64 };

size_t weight_dtype_size(WeightDType t);
const char* weight_dtype_name(WeightDType t);
// The safetensors spelling ("BF16") to the type; nullopt for anything else.
std::optional<WeightDType> parse_weight_dtype(const std::string& name);
bool converts_to_float(WeightDType t);

// n elements of `t` at `src` (any alignment) to float32, exactly: every BF16 and F16 value
// is a float32 value. t must convert_to_float.
void decode_to_float(WeightDType t, const void* src, int64_t n, float* out);
// n float32 values to `t` (F32, BF16 or F16) at `dst`, rounding to nearest even as
// PyTorch's .to(torch.bfloat16) / .half() do; NaN stays NaN, overflow becomes infinity.
void encode_from_float(WeightDType t, const float* src, int64_t n, void* dst);

}  // namespace emb
