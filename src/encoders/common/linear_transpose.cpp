#include "encoders/common/linear_transpose.hpp"

#include <cstddef>

namespace emb::encoders {

void transpose_linear_into(const float* stored, int64_t out, int64_t in, float* dst, int64_t dst_cols, int64_t col) {
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) dst[size_t(i * dst_cols + col + o)] = stored[size_t(o * in + i)];
}

}  // namespace emb::encoders
