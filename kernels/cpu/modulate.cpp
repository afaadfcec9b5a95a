#include "kernels/cpu/modulate.hpp"

namespace emb::cpu {

namespace {
constexpr int64_t kParallelElements = 1 << 15;
}

void modulate_forward(const float* x, const float* scale, const float* shift, int64_t ld_mod, float* y, int64_t N,
                      int C) {
#pragma omp parallel for if (N * C >= kParallelElements)
  for (int64_t i = 0; i < N; ++i) {
    const float* xi = x + i * C;
    const float* sc = scale + i * ld_mod;
    const float* sh = shift + i * ld_mod;
    float* yi = y + i * C;
    for (int c = 0; c < C; ++c) yi[c] = xi[c] * (1.0f + sc[c]) + sh[c];
  }
}

void modulate_backward(const float* x, const float* scale, int64_t ld_mod, const float* dy, float* dx, float* dscale,
                       float* dshift, int64_t N, int C) {
#pragma omp parallel for if (N * C >= kParallelElements)
  for (int64_t i = 0; i < N; ++i) {
    const float* xi = x + i * C;
    const float* dyi = dy + i * C;
    if (dx) {
      const float* sc = scale + i * ld_mod;
      float* dxi = dx + i * C;
      for (int c = 0; c < C; ++c) dxi[c] += dyi[c] * (1.0f + sc[c]);
    }
    if (dscale) {
      float* dsc = dscale + i * ld_mod;
      for (int c = 0; c < C; ++c) dsc[c] += dyi[c] * xi[c];
    }
    if (dshift) {
      float* dsh = dshift + i * ld_mod;
      for (int c = 0; c < C; ++c) dsh[c] += dyi[c];
    }
  }
}

void gated_residual_forward(float* x, const float* gate, int64_t ld_gate, const float* y, int64_t N, int C) {
#pragma omp parallel for if (N * C >= kParallelElements)
  for (int64_t i = 0; i < N; ++i) {
    float* xi = x + i * C;
    const float* yi = y + i * C;
    if (gate) {
      const float* gi = gate + i * ld_gate;
      for (int c = 0; c < C; ++c) xi[c] += gi[c] * yi[c];
    } else {
      for (int c = 0; c < C; ++c) xi[c] += yi[c];
    }
  }
}

void gated_residual_backward(const float* gate, int64_t ld_gate, const float* y, const float* dx, float* dy,
                             float* dgate, int64_t N, int C) {
#pragma omp parallel for if (N * C >= kParallelElements)
  for (int64_t i = 0; i < N; ++i) {
    const float* dxi = dx + i * C;
    if (dy) {
      float* dyi = dy + i * C;
      if (gate) {
        const float* gi = gate + i * ld_gate;
        for (int c = 0; c < C; ++c) dyi[c] += dxi[c] * gi[c];
      } else {
        for (int c = 0; c < C; ++c) dyi[c] += dxi[c];
      }
    }
    if (dgate) {
      const float* yi = y + i * C;
      float* dgi = dgate + i * ld_gate;
      for (int c = 0; c < C; ++c) dgi[c] += dxi[c] * yi[c];
    }
  }
}

}  // namespace emb::cpu
