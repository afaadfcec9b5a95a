// The taps of ATen's plain (not antialiased) bilinear and bicubic resampling along one axis,
// align_corners = False, for output index i of `out` from `in` samples: source indices and
// float32 weights, the weights formed in double as ATen's CPU kernel does. Host and device
// code: the CPU's tables (kernels/cpu/resize.cpp) and the CUDA kernel (kernels/cuda/resize.cu)
// read these same functions.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/op_types.hpp"  // EMB_HOST_DEVICE

namespace emb {

struct ResizeTaps {
  int n = 0;  // 2 (bilinear) or 4 (bicubic)
  int64_t index[4] = {0, 0, 0, 0};
  float weight[4] = {0, 0, 0, 0};
};

// floor(src) and floor(src) + 1, the second clamped to the last sample (ATen's h1p); the source
// coordinate clamped at 0 first.
EMB_HOST_DEVICE inline ResizeTaps bilinear_taps(int64_t in, int64_t out, int64_t i) {
  const double scale = double(in) / double(out);
  double src = scale * (double(i) + 0.5) - 0.5;
  src = src < 0.0 ? 0.0 : src;
  const int64_t i0 = int64_t(floor(src));
  const double lambda = src - double(i0);
  ResizeTaps t;
  t.n = 2;
  t.index[0] = i0 < in - 1 ? i0 : in - 1;
  t.index[1] = i0 + 1 < in - 1 ? i0 + 1 : in - 1;
  t.weight[0] = float(1.0 - lambda), t.weight[1] = float(lambda);
  return t;
}

// Keys' cubic convolution (A = −0.75) at offsets −1, 0, 1, 2 of floor(src), indices clamped to
// [0, in).
EMB_HOST_DEVICE inline ResizeTaps bicubic_taps(int64_t in, int64_t out, int64_t i) {
  constexpr double a = -0.75;
  const double scale = double(in) / double(out);
  const double src = scale * (double(i) + 0.5) - 0.5;
  const int64_t i0 = int64_t(floor(src));
  const double f = src - double(i0);
  const double near0 = ((a + 2) * f - (a + 3)) * f * f + 1, g = 1 - f;
  const double near1 = ((a + 2) * g - (a + 3)) * g * g + 1;
  const double x0 = f + 1, x3 = 2 - f;
  const double far0 = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a, far3 = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
  ResizeTaps t;
  t.n = 4;
  const double w[4] = {far0, near0, near1, far3};
  for (int j = 0; j < 4; ++j) {
    const int64_t k = i0 - 1 + j;
    t.index[j] = k < 0 ? 0 : k > in - 1 ? in - 1 : k;
    t.weight[j] = float(w[j]);
  }
  return t;
}

}  // namespace emb
