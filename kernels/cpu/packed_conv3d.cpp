#include "kernels/cpu/packed_conv3d.hpp"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/conv3d.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/packed_linear.hpp"
#include "kernels/cpu/packed_tile.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {

using namespace packed;

// Output positions per block: 8 row panels, whose A (144 kB) and y rows
// stay in L2 while every column panel of W streams past them.
constexpr int kRowPanels = 8;
constexpr int64_t kBlockRows = kRowPanels * kMr;

// One output frame's geometry: where output position p's window starts in the input frame.
struct Window {
  const ConvConfig& c;
  int64_t Ci;
  int Wo;
};

// n floats from src (null: zeros) to dst, inline: the runs are a pixel's channels (3 of them in
// the VAE's first conv), too short for a memmove call's overhead.
__attribute__((target("avx512f"))) void copy_run(const float* src, float* dst, int64_t n) {
  for (; n >= 16; n -= 16, dst += 16) {
    _mm512_storeu_ps(dst, src ? _mm512_loadu_ps(src) : _mm512_setzero_ps());
    if (src) src += 16;
  }
  const __mmask16 m = __mmask16((1u << n) - 1);
  _mm512_mask_storeu_ps(dst, m, src ? _mm512_maskz_loadu_ps(m, src) : _mm512_setzero_ps());
}

// A [12][kKc] (its first kc columns) = columns [k0, k0 + kc) of the windows of output positions
// p0 .. p0 + rows − 1 (rows ≤ 12; the others zero) over one time tap's input frame; column k is
// (dh, dw, ci), so a row is a few runs of a pixel's channels.
__attribute__((target("avx512f"))) void gather_panel(const Window& g, const float* frame, int64_t p0, int rows, int64_t k0, int64_t kc, float* A) {
  const ConvConfig& c = g.c;
  for (int r = 0; r < kMr; ++r, A += kKc) {
    if (r >= rows) {
      copy_run(nullptr, A, kc);
      continue;
    }
    const int h0 = int((p0 + r) / g.Wo) * c.sh - c.pad_top, w0 = int((p0 + r) % g.Wo) * c.sw - c.pad_left;
    for (int64_t k = k0; k < k0 + kc;) {
      const int64_t cell = k / g.Ci, c0 = k % g.Ci, run = std::min(g.Ci - c0, k0 + kc - k);
      const int hi = h0 + int(cell / c.kw), wi = w0 + int(cell % c.kw);
      const bool inside = hi >= 0 && hi < c.height && wi >= 0 && wi < c.width;
      copy_run(inside ? frame + (int64_t(hi) * c.width + wi) * g.Ci + c0 : nullptr, A + (k - k0), run);
      k += run;
    }
  }
}

// One block of output rows [p0, p0 + rows) of output frame `to` of clip n into `out` (its first
// row), over the frame's time taps, then the bias.
void conv_block(const float* clip, const Window& g, const float* packed, int64_t Co, int to, int64_t p0, int64_t rows,
                const float* bias, float* out, std::vector<float>& A) {
  const ConvConfig& c = g.c;
  const int64_t spatial = int64_t(c.kh) * c.kw * g.Ci, in_plane = int64_t(c.height) * c.width;
  const int64_t tap_elements = packed_linear_elements(spatial, Co), panels = col_panels(Co);
  const int row_panels = int((rows + kMr - 1) / kMr);
  const TimeTaps taps = time_taps(c, to);
  bool accumulate = false;
  for (int dt = taps.first; dt < taps.end; ++dt) {
    const float* frame = clip + int64_t(taps.t0 + dt) * in_plane * g.Ci;
    for (int64_t k0 = 0; k0 < spatial; k0 += kKc, accumulate = true) {
      const int64_t kc = std::min(kKc, spatial - k0);
      for (int i = 0; i < row_panels; ++i)
        gather_panel(g, frame, p0 + i * kMr, int(std::min<int64_t>(kMr, rows - i * kMr)), k0, kc,
                     A.data() + i * kPanelFloats);
      const float* block = packed + dt * tap_elements + k0 * panels * kNr;
      for (int64_t j = 0; j < panels; ++j)
        for (int i = 0; i < row_panels; ++i)
          micro_tile(kc, A.data() + i * kPanelFloats, block + j * kc * kNr, out + i * kMr * Co + j * kNr, Co,
                     int(std::min<int64_t>(kMr, rows - i * kMr)), Co - j * kNr, accumulate);
    }
  }
  if (bias)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < Co; ++o) out[r * Co + o] += bias[o];
}

}  // namespace

int64_t packed_conv3d_elements(int64_t kt, int64_t spatial, int64_t Co) {
  return kt * packed_linear_elements(spatial, Co);
}

void pack_conv3d(const float* weight, int64_t kt, int64_t spatial, int64_t Co, float* packed) {
  for (int64_t dt = 0; dt < kt; ++dt)
    pack_linear(weight + dt * spatial * Co, spatial, Co, packed + dt * packed_linear_elements(spatial, Co));
}

void packed_conv3d_forward(const float* x, int64_t Ci, const float* packed, const float* bias, float* y, int64_t Co,
                           const ConvConfig& c) {
  if (!avx512()) {
    conv3d_forward(x, Ci, packed, bias, y, Co, c);
    return;
  }
  const int To = c.out_frames();
  const int64_t plane = int64_t(c.out_height()) * c.out_width(), in_clip = int64_t(c.frames) * c.height * c.width;
  const int64_t blocks = (plane + kBlockRows - 1) / kBlockRows, items = int64_t(c.batch) * To * blocks;
  const Window g{c, Ci, c.out_width()};
  const int64_t work = c.out_rows() * c.taps() * Ci * Co;
  parallel_for_scratch<Schedule::dynamic>(
      items, work >= (1 << 20), [] { return std::vector<float>(size_t(kRowPanels * kPanelFloats)); },
      [&](std::vector<float>& A, int64_t item) {
        const int64_t frame = item / blocks, p0 = item % blocks * kBlockRows;
        const int n = int(frame / To), to = int(frame % To);
        conv_block(x + n * in_clip * Ci, g, packed, Co, to, p0, std::min(kBlockRows, plane - p0), bias,
                   y + (frame * plane + p0) * Co, A);
      });
}

}  // namespace emb::cpu

// ---- CpuOps entry (kernels/ops.hpp) ----

namespace emb {

void CpuOps::packed_conv3d_forward(const View& x, const View& packed, const View& bias, const View& y,
                                   const ConvConfig& cfg) {
  fp32(check_packed_conv3d(*this, x, packed, bias, y, cfg));
  cpu::packed_conv3d_forward(cf(x), x.cols, cf(packed), cf(bias), f(y), y.cols, cfg);
}

}  // namespace emb
