#include "kernels/fp8_quantize.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/fp8_e4m3.hpp"

namespace emb {

namespace {

// Calls visit(r0, r1, c0, c1, s) for every block: rows [r0, r1), cols [c0, c1), scale index s.
template <class Visit>
void for_each_block(int64_t rows, int64_t cols, Fp8BlockShape block, Visit visit) {
  const int64_t grid_cols = fp8_blocks(cols, block.cols);
  for (int64_t r0 = 0; r0 < rows; r0 += block.rows)
    for (int64_t c0 = 0; c0 < cols; c0 += block.cols)
      visit(r0, std::min(rows, r0 + block.rows), c0, std::min(cols, c0 + block.cols),
            r0 / block.rows * grid_cols + c0 / block.cols);
}

}  // namespace

float fp8_scale(float amax) {
  const float s = amax / kE4M3Max;
  return s > 0.0f ? s : 1.0f;
}

void fp8_quantize(const float* x, int64_t rows, int64_t cols, Fp8BlockShape block, uint8_t* codes, float* scales) {
  for_each_block(rows, cols, block, [=](int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t s) {
    float amax = 0.0f;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
    const float scale = fp8_scale(amax);
    scales[s] = scale;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) codes[r * cols + c] = encode_e4m3(x[r * cols + c] / scale);
  });
}

void fp8_dequantize(const uint8_t* codes, const float* scales, int64_t rows, int64_t cols, Fp8BlockShape block,
                    float* x) {
  for_each_block(rows, cols, block, [=](int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t s) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) x[r * cols + c] = decode_e4m3(codes[r * cols + c]) * scales[s];
  });
}

void fp8_transpose_blocks(const uint8_t* codes, const float* scales, int64_t rows, int64_t cols, uint8_t* codes_t,
                          float* scales_t) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) codes_t[c * rows + r] = codes[r * cols + c];
  const int64_t grid_rows = fp8_blocks(rows), grid_cols = fp8_blocks(cols);
  for (int64_t i = 0; i < grid_rows; ++i)
    for (int64_t j = 0; j < grid_cols; ++j) scales_t[j * grid_rows + i] = scales[i * grid_cols + j];
}

}  // namespace emb
