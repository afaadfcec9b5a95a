// The packed-W GEMM's layout and micro-kernel, shared by the frozen linears
// (kernels/cpu/packed_linear.hpp) and the frozen convolutions' implicit GEMM
// (kernels/cpu/packed_conv3d.hpp).
//
// W [K, N] is packed as panels of kNr = 32 columns (zero-padded past N) in blocks of kKc rows:
// block kb, panel j is [kc][32] contiguous. The left operand comes as row panels A [12][kKc]
// (row r's kc values at A + r·kKc: a fixed stride the micro-kernel addresses with immediate
// offsets from one pointer), packed by the caller per call with plain row copies. One micro-tile
// is 12 rows × 32 columns of y held in 24 zmm accumulators over one K block.
#pragma once
#include <cstdint>

namespace emb::cpu::packed {

constexpr int kMr = 12, kNr = 32;  // the micro-tile of y: 12 rows × 2 zmm
constexpr int64_t kKc = 384;       // rows of W per block: a panel's block (48 kB) stays in L2
constexpr int64_t kPanelFloats = kMr * kKc;  // one row panel of A

inline int64_t col_panels(int64_t N) { return (N + kNr - 1) / kNr; }

// True when this CPU runs the AVX-512 micro-kernel (else the packed form is W itself).
bool avx512();

// y rows [0, rows) × columns [0, width) (rows ≤ 12, width ≤ 32, row stride ldy) = A [12][kKc]
// (its first kc columns) · B [kc][32], plus y's values when `accumulate`.
void micro_tile(int64_t kc, const float* A, const float* B, float* y, int64_t ldy, int rows, int64_t width,
                bool accumulate);

}  // namespace emb::cpu::packed
