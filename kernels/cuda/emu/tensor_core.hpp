// The tensor-core wrappers of kernels/cuda/mma.cuh under the emulation: warp collectives that
// gather the 32 lanes' fragments and compute with the PTX ISA layouts written there.
#pragma once
#include <cstdint>

namespace emb::emu {

// The bf16 in the low (half 0) or high (half 1) 16 bits of a fragment register, as a float.
float bf16_at(uint32_t reg, int half);

void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], const float (&c)[4],
                       const char* file, int line);
// count 8×8 matrices (1, 2 or 4), transposed or not, into r[0..count).
void ldmatrix(uint32_t* r, int count, bool trans, const void* row, const char* file, int line);

}  // namespace emb::emu

namespace emb::cuda {

inline void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], const float (&c)[4],
                              const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  emu::mma_m16n8k16_bf16(d, a, b, c, file, line);
}
inline void ldmatrix_x4(uint32_t (&r)[4], const void* row, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE()) {
  emu::ldmatrix(r, 4, false, row, file, line);
}
inline void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  emu::ldmatrix(r, 4, true, row, file, line);
}
inline void ldmatrix_x2(uint32_t (&r)[2], const void* row, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE()) {
  emu::ldmatrix(r, 2, false, row, file, line);
}
inline void ldmatrix_x2_trans(uint32_t (&r)[2], const void* row, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  emu::ldmatrix(r, 2, true, row, file, line);
}

}  // namespace emb::cuda
