#include "kernels/cpu/pixel_unshuffle.hpp"

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/unshuffle_rows.hpp"

namespace emb::cpu {

void pixel_unshuffle_forward(const float* x, int64_t C, float* y, const UnshuffleConfig& u) {
  const int To = u.out_frames(), Ho = u.height / u.fs, Wo = u.width / u.fs;
  const int64_t out_cols = C * u.ft * u.fs * u.fs / u.group, cells = int64_t(u.batch) * To * Ho * Wo;
  parallel_for(cells, cells * out_cols >= (1 << 15), [&](int64_t cell) {
    float* out = y + cell * out_cols;
    for (int64_t o = 0; o < out_cols; ++o) {
      float sum = 0.0f;
      for (int64_t k = 0; k < u.group; ++k) {
        const UnshuffleSource s = unshuffle_source(o * u.group + k, u.ft, u.fs, u.columns_first);
        const int64_t row = unshuffle_input_row(u, To, cell, s);
        if (row >= 0) sum += x[row * C + s.c];
      }
      out[o] = u.group == 1 ? sum : sum / float(u.group);
    }
  });
}

}  // namespace emb::cpu

// ---- CpuOps entry (kernels/ops.hpp) ----

namespace emb {

void CpuOps::pixel_unshuffle_forward(const View& x, const View& y, const UnshuffleConfig& cfg) {
  fp32(check_pixel_unshuffle(x, y, cfg));
  cpu::pixel_unshuffle_forward(cf(x), x.cols, f(y), cfg);
}

}  // namespace emb
