#include "encoders/frames/resize.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::frames {

namespace {

// ATen's antialias bilinear filter, in float32 (aa_filter<float>).
float triangle(float x) {
  x = std::fabs(x);
  return x < 1.0f ? 1.0f - x : 0.0f;
}

ResizeTable empty_table(int64_t in, int64_t out, int taps, bool fused) {
  EMB_CHECK(in > 0 && out > 0, "resize: sizes must be positive, not ", in, " -> ", out);
  ResizeTable t;
  t.in = in, t.out = out, t.taps = taps, t.fused = fused;
  t.index.assign(size_t(out * taps), 0);
  t.weight.assign(size_t(out * taps), 0.0f);
  return t;
}

// ATen's area_pixel_compute_source_index for align_corners = False.
double source_index(double scale, int64_t dst, bool cubic) {
  const double src = scale * (double(dst) + 0.5) - 0.5;
  return cubic ? src : std::max(src, 0.0);
}

}  // namespace

// ATen UpSampleKernel.cpp, HelperInterpBase::_compute_indices_min_size_weights_aa with
// interp_size 2 (bilinear), scalar_t = float; the literals 0.5 are double, which promotes the
// marked steps (tests/encoders_ref/resize.py spells out each rounding).
ResizeTable aa_bilinear_table(int64_t in, int64_t out) {
  const float scale = float(in) / float(out);
  const float support = scale >= 1.0f ? scale : 1.0f;
  const float invscale = scale >= 1.0f ? float(1.0 / double(scale)) : 1.0f;
  const int taps = int(std::ceil(double(support))) * 2 + 1;
  ResizeTable t = empty_table(in, out, taps, true);
  for (int64_t i = 0; i < out; ++i) {
    const float center = float(double(scale) * (double(i) + 0.5));
    const int64_t xmin = std::max<int64_t>(int64_t(double(center - support) + 0.5), 0);
    int64_t xsize = std::min<int64_t>(int64_t(double(center + support) + 0.5), in) - xmin;
    xsize = std::clamp<int64_t>(xsize, 0, taps);
    float total = 0.0f;
    float* w = t.weight.data() + i * taps;
    for (int64_t j = 0; j < xsize; ++j) {
      w[j] = triangle(float((double(float(float(j + xmin) - center)) + 0.5) * double(invscale)));
      total += w[j];
    }
    if (total != 0.0f)
      for (int64_t j = 0; j < xsize; ++j) w[j] /= total;
    for (int j = 0; j < taps; ++j) t.index[size_t(i * taps + j)] = std::min<int64_t>(xmin + j, in - 1);
  }
  return t;
}

// Taps floor(src) and floor(src) + 1, the second clamped to the last pixel (ATen's h1p).
ResizeTable bilinear_table(int64_t in, int64_t out) {
  ResizeTable t = empty_table(in, out, 2, false);
  const double scale = double(in) / double(out);
  for (int64_t i = 0; i < out; ++i) {
    const double src = source_index(scale, i, false);
    const int64_t i0 = int64_t(std::floor(src));
    const double lambda = src - double(i0);
    t.index[size_t(2 * i)] = std::min(i0, in - 1), t.index[size_t(2 * i + 1)] = std::min(i0 + 1, in - 1);
    t.weight[size_t(2 * i)] = float(1.0 - lambda), t.weight[size_t(2 * i + 1)] = float(lambda);
  }
  return t;
}

// Keys' cubic convolution (A = −0.75) at offsets −1, 0, 1, 2 of floor(src), indices clamped.
ResizeTable bicubic_table(int64_t in, int64_t out) {
  constexpr double a = -0.75;
  auto near = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  ResizeTable t = empty_table(in, out, 4, false);
  const double scale = double(in) / double(out);
  for (int64_t i = 0; i < out; ++i) {
    const double src = source_index(scale, i, true);
    const int64_t i0 = int64_t(std::floor(src));
    const double f = src - double(i0);
    const double w[4] = {far(f + 1), near(f), near(1 - f), far(2 - f)};
    for (int j = 0; j < 4; ++j) {
      t.index[size_t(4 * i + j)] = std::clamp<int64_t>(i0 - 1 + j, 0, in - 1);
      t.weight[size_t(4 * i + j)] = float(w[j]);
    }
  }
  return t;
}

namespace {

// out[o] = Σ_j w_j · in[index_j · stride] over the taps of output o, as the table sums.
inline float apply_taps(const ResizeTable& t, int64_t o, const float* in, int64_t stride) {
  const int64_t* idx = t.index.data() + o * t.taps;
  const float* w = t.weight.data() + o * t.taps;
  float acc = in[idx[0] * stride] * w[0];
  for (int j = 1; j < t.taps; ++j)
    acc = t.fused ? std::fma(in[idx[j] * stride], w[j], acc) : acc + in[idx[j] * stride] * w[j];
  return acc;
}

}  // namespace

void resize_hwc(const float* src, int64_t C, const ResizeTable& rows, const ResizeTable& cols, float* dst) {
  const int64_t H = rows.in, W = cols.in, Ho = rows.out, Wo = cols.out;
  std::vector<float> mid(size_t(H * Wo * C));
  float* const mid_data = mid.data();
  cpu::parallel_for(H, H * Wo * C >= (1 << 16), [=, &cols](int64_t y) {
    for (int64_t x = 0; x < Wo; ++x)
      for (int64_t c = 0; c < C; ++c) mid_data[(y * Wo + x) * C + c] = apply_taps(cols, x, src + y * W * C + c, C);
  });
  cpu::parallel_for(Ho, Ho * Wo * C >= (1 << 16), [=, &rows](int64_t y) {
    for (int64_t x = 0; x < Wo; ++x)
      for (int64_t c = 0; c < C; ++c) dst[(y * Wo + x) * C + c] = apply_taps(rows, y, mid_data + x * C + c, Wo * C);
  });
}

}  // namespace emb::frames
