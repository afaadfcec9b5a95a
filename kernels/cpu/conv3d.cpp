#include "kernels/cpu/conv3d.hpp"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/op_entry.hpp"

namespace emb::cpu {

namespace {

// The gathered panel's size bound (16 MiB of fp32): large enough for GEMMs of hundreds of rows
// at the VAE's widest tap count (27·384), small enough to stay out of the way at 352 × 640.
constexpr int64_t kPanelFloats = int64_t(1) << 22;

}  // namespace

TimeTaps time_taps(const ConvConfig& c, int to) {
  const int t0 = to * c.st - c.pad_front;
  return {t0, std::max(0, -t0), std::min(c.kt, c.frames - t0)};
}

void conv3d_forward(const float* x, int64_t Ci, const float* weight, const float* bias, float* y, int64_t Co,
                    const ConvConfig& c) {
  const int To = c.out_frames(), Ho = c.out_height(), Wo = c.out_width();
  const int64_t plane = int64_t(Ho) * Wo, in_plane = int64_t(c.height) * c.width;
  const bool pointwise = c.taps() == 1 && c.st == 1 && c.sh == 1 && c.sw == 1 && c.pad_front == 0 &&
                         c.pad_top == 0 && c.pad_left == 0 && c.pad_back == 0 && c.pad_bottom == 0 && c.pad_right == 0;
  if (pointwise) {
    linear_forward(x, weight, bias, y, c.out_rows(), int(Ci), int(Co));
    return;
  }
  const int64_t spatial = int64_t(c.kh) * c.kw * Ci;  // panel columns per time tap
  const int64_t block = std::max<int64_t>(1, std::min<int64_t>(plane, kPanelFloats / (spatial * c.kt)));
  std::vector<float> panel(size_t(block * spatial * c.kt));
  for (int n = 0; n < c.batch; ++n)
    for (int to = 0; to < To; ++to) {
      float* out = y + (int64_t(n) * To + to) * plane * Co;
      const TimeTaps taps = time_taps(c, to);
      const int64_t K = (taps.end - taps.first) * spatial;
      const float* clip = x + int64_t(n) * c.frames * in_plane * Ci;
      for (int64_t m0 = 0; m0 < plane; m0 += block) {
        const int64_t rows = std::min(block, plane - m0);
        // Gathered on this thread: the copy is a small part of the GEMM's time, and an OpenMP
        // region between OpenBLAS's threaded GEMMs left its threads spinning against OpenBLAS's
        // for the same cores (37 % of the VAE's time on 2 cores; make bench, dreamzero_encoders).
        for (int64_t m = 0; m < rows; ++m) {
          const int ho = int((m0 + m) / Wo), wo = int((m0 + m) % Wo);
          float* dst = panel.data() + m * K;
          for (int dt = taps.first; dt < taps.end; ++dt)
            for (int dh = 0; dh < c.kh; ++dh) {
              const int hi = ho * c.sh + dh - c.pad_top;
              for (int dw = 0; dw < c.kw; ++dw, dst += Ci) {
                const int wi = wo * c.sw + dw - c.pad_left;
                if (hi < 0 || hi >= c.height || wi < 0 || wi >= c.width)
                  std::memset(dst, 0, size_t(Ci) * sizeof(float));
                else
                  std::memcpy(dst, clip + ((int64_t(taps.t0 + dt) * c.height + hi) * c.width + wi) * Ci,
                              size_t(Ci) * sizeof(float));
              }
            }
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(rows), int(Co), int(K), 1.0f, panel.data(), int(K),
                    weight + taps.first * spatial * Co, int(Co), 0.0f, out + m0 * Co, int(Co));
        add_bias(out + m0 * Co, bias, rows, Co);
      }
    }
}

}  // namespace emb::cpu

// ---- CpuOps entry (kernels/ops.hpp) ----

namespace emb {

void CpuOps::conv3d_forward(const View& x, const View& weight, const View& bias, const View& y,
                            const ConvConfig& cfg) {
  fp32(check_conv3d(x, weight, bias, y, cfg));
  cpu::conv3d_forward(cf(x), x.cols, cf(weight), cf(bias), f(y), y.cols, cfg);
}

}  // namespace emb
