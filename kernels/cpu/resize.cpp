#include "kernels/cpu/resize.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/resize_taps.hpp"

namespace emb::cpu {

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

namespace {

// A plain (not antialiased) table from the per-index taps of kernels/resize_taps.hpp.
template <class Taps>
ResizeTable table_of(int64_t in, int64_t out, int taps, Taps taps_of) {
  ResizeTable t = empty_table(in, out, taps, false);
  for (int64_t i = 0; i < out; ++i) {
    const ResizeTaps r = taps_of(in, out, i);
    for (int j = 0; j < taps; ++j) t.index[size_t(i * taps + j)] = r.index[j], t.weight[size_t(i * taps + j)] = r.weight[j];
  }
  return t;
}

}  // namespace

ResizeTable bilinear_table(int64_t in, int64_t out) { return table_of(in, out, 2, bilinear_taps); }
ResizeTable bicubic_table(int64_t in, int64_t out) { return table_of(in, out, 4, bicubic_taps); }

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
#pragma omp parallel for if (H * Wo * C >= (1 << 16))
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < Wo; ++x)
      for (int64_t c = 0; c < C; ++c) mid[size_t((y * Wo + x) * C + c)] = apply_taps(cols, x, src + y * W * C + c, C);
#pragma omp parallel for if (Ho * Wo * C >= (1 << 16))
  for (int64_t y = 0; y < Ho; ++y)
    for (int64_t x = 0; x < Wo; ++x)
      for (int64_t c = 0; c < C; ++c)
        dst[(y * Wo + x) * C + c] = apply_taps(rows, y, mid.data() + x * C + c, Wo * C);
}

}  // namespace emb::cpu

// ---- CpuOps entry (kernels/ops.hpp) ----

namespace emb {

void CpuOps::resize_forward(const View& x, const View& y, const ResizeConfig& cfg) {
  fp32(check_resize(x, y, cfg));
  const auto table = cfg.mode == ResizeMode::bicubic ? cpu::bicubic_table : cpu::bilinear_table;
  const cpu::ResizeTable rows = table(cfg.in_height, cfg.out_height), cols = table(cfg.in_width, cfg.out_width);
  const int64_t in = int64_t(cfg.in_height) * cfg.in_width * x.cols, out = int64_t(cfg.out_height) * cfg.out_width * x.cols;
  for (int n = 0; n < cfg.batch; ++n) cpu::resize_hwc(cf(x) + n * in, x.cols, rows, cols, f(y) + n * out);
}

}  // namespace emb
