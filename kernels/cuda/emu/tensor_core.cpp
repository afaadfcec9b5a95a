#include "kernels/cuda/emu/tensor_core.hpp"

#include <cstring>
#include <string>

#include "kernels/cuda/emu/block_scheduler.hpp"
#include "kernels/cuda/emu/runtime.hpp"

namespace emb::emu {

float bf16_at(uint32_t reg, int half) {
  const uint32_t bits = (half ? reg >> 16 : reg & 0xffffu) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace {

struct MmaIn {
  uint32_t a[4], b[2];
  float c[4];
};

// Rebuilds A [16][16], B [16][8] and C [16][8] from the fragments (layouts in mma.cuh) and
// returns D = A·B + C to every lane: products summed in double, rounded once to fp32 (a GPU's
// summation order and intermediate rounding are its own).
void combine_mma(const void* const* in, void* const* out) {
  float A[16][16], B[16][8], C[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const auto& f = *static_cast<const MmaIn*>(in[lane]);
    const int g = lane / 4, t = lane % 4;
    for (int h = 0; h < 2; ++h) {
      A[g][2 * t + h] = bf16_at(f.a[0], h);
      A[g + 8][2 * t + h] = bf16_at(f.a[1], h);
      A[g][2 * t + 8 + h] = bf16_at(f.a[2], h);
      A[g + 8][2 * t + 8 + h] = bf16_at(f.a[3], h);
      B[2 * t + h][g] = bf16_at(f.b[0], h);
      B[2 * t + 8 + h][g] = bf16_at(f.b[1], h);
      C[g][2 * t + h] = f.c[h];
      C[g + 8][2 * t + h] = f.c[2 + h];
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    float* d = static_cast<float*>(out[lane]);
    for (int e = 0; e < 4; ++e) {
      const int row = g + (e / 2) * 8, col = 2 * t + e % 2;
      double s = C[row][col];
      for (int k = 0; k < 16; ++k) s += double(A[row][k]) * B[k][col];
      d[e] = float(s);
    }
  }
}

struct LdmatrixIn {
  const void* row;
  uint32_t* r;
  int count;
  bool trans;
};

uint16_t b16_at(const void* row, int col) {
  uint16_t v;
  std::memcpy(&v, static_cast<const char*>(row) + 2 * col, 2);
  return v;
}

void combine_ldmatrix(const void* const* in, void* const*) {
  const auto& first = *static_cast<const LdmatrixIn*>(in[0]);
  for (int lane = 0; lane < 8 * first.count; ++lane) {
    const void* row = static_cast<const LdmatrixIn*>(in[lane])->row;
    if (reinterpret_cast<uintptr_t>(row) % 16)
      device_fault("ldmatrix: lane " + std::to_string(lane) + "'s row address is not 16-byte aligned");
    if (is_device_memory(row))
      device_fault("ldmatrix: lane " + std::to_string(lane) + "'s row address is global memory, not shared");
  }
  for (int lane = 0; lane < 32; ++lane) {
    const auto& mine = *static_cast<const LdmatrixIn*>(in[lane]);
    if (mine.count != first.count || mine.trans != first.trans) device_fault("ldmatrix: lanes disagree on the shape");
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < mine.count; ++i) {
      const auto row_of = [&](int r) { return static_cast<const LdmatrixIn*>(in[8 * i + r])->row; };
      const uint16_t lo = mine.trans ? b16_at(row_of(2 * t), g) : b16_at(row_of(g), 2 * t);
      const uint16_t hi = mine.trans ? b16_at(row_of(2 * t + 1), g) : b16_at(row_of(g), 2 * t + 1);
      mine.r[i] = uint32_t(lo) | uint32_t(hi) << 16;
    }
  }
}

}  // namespace

void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], const float (&c)[4],
                       const char* file, int line) {
  const MmaIn in{{a[0], a[1], a[2], a[3]}, {b[0], b[1]}, {c[0], c[1], c[2], c[3]}};
  float result[4];
  warp_collective("mma_m16n8k16_bf16", file, line, 0xffffffffu, &in, result, &combine_mma);
  for (int e = 0; e < 4; ++e) d[e] = result[e];
}

void ldmatrix(uint32_t* r, int count, bool trans, const void* row, const char* file, int line) {
  const LdmatrixIn in{row, r, count, trans};
  warp_collective(trans ? "ldmatrix.trans" : "ldmatrix", file, line, 0xffffffffu, &in, nullptr, &combine_ldmatrix);
}

}  // namespace emb::emu
