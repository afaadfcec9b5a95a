// Block-scaled FP8 storage (DeepSeek-V3; Transformer Engine's Float8BlockScaling): a row-major
// matrix [rows, cols] is cut into blocks, the last ones along either dim partial; a block keeps
// the E4M3 codes of x / s with one fp32 scale s = amax / 448, so its largest magnitude lands on
// E4M3's largest value, and an outlier costs precision in its own block only.
// Activations and output gradients use 1×128 tiles along the reduction dim, weights 128×128
// blocks: either way there is one scale per 128-wide slice of the reduction dim, which lets the
// GEMM apply the scales once per 128-long partial sum (fp8_gemm.hpp).
#pragma once
#include <cstdint>

namespace emb {

struct Fp8BlockShape {
  int64_t rows, cols;
};
constexpr int64_t kFp8BlockEdge = 128;
constexpr Fp8BlockShape kFp8Tile{1, kFp8BlockEdge};               // activations, gradients
constexpr Fp8BlockShape kFp8Block{kFp8BlockEdge, kFp8BlockEdge};  // weights

// Blocks of `edge` elements covering n, the last one partial.
inline int64_t fp8_blocks(int64_t n, int64_t edge = kFp8BlockEdge) { return (n + edge - 1) / edge; }
// Scales of a [rows, cols] matrix in blocks of `block`.
inline int64_t fp8_scale_count(int64_t rows, int64_t cols, Fp8BlockShape block) {
  return fp8_blocks(rows, block.rows) * fp8_blocks(cols, block.cols);
}

// amax / 448; 1 for a block of zeros (or one so small that the quotient underflows): its codes
// are 0 whatever the scale, and 1 keeps the division finite.
float fp8_scale(float amax);

// codes [rows, cols] and scales [ceil(rows / block.rows), ceil(cols / block.cols)] (row-major)
// of x [rows, cols]: code = E4M3(x / s), s = fp8_scale(amax of the block).
void fp8_quantize(const float* x, int64_t rows, int64_t cols, Fp8BlockShape block, uint8_t* codes, float* scales);
// x = value(code) · s of its block.
void fp8_dequantize(const uint8_t* codes, const float* scales, int64_t rows, int64_t cols, Fp8BlockShape block,
                    float* x);

// The 128×128-block quantisation of the transpose [cols, rows] from that of [rows, cols],
// exactly: a square block holds the same elements either way, so transposing the codes and the
// scale grid equals quantising the transpose. A weight needs both (forward and input gradient).
void fp8_transpose_blocks(const uint8_t* codes, const float* scales, int64_t rows, int64_t cols, uint8_t* codes_t,
                          float* scales_t);

}  // namespace emb
