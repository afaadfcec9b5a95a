// The Wan VAE's and CLIP's ops on the CPU reference (kernels/ops.hpp, issue 34), each against a
// double-precision loop written here from the op's definition: conv3d_forward and its packed
// form packed_conv3d_forward (causal k3 with
// spatial padding, the stride-2 Conv2d with (0, 1, 0, 1) padding, the temporal stride-2 conv, a
// 1×1×1 conv, a batch of clips), pixel_unshuffle_forward
// (Wan2.2's columns-first patchify, the AvgDown3D average pooling with a zero frame in front,
// CLIP-style patch rows), channel_rmsnorm_forward (with SiLU, in place, a zero row); bad calls
// are one line.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "error_of.hpp"
#include "kernel_check.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "unshuffle_reference.hpp"

using namespace emb;
using namespace emb::test;

namespace {

// conv3d_forward's definition in double.
std::vector<double> reference_conv(const std::vector<float>& x, int64_t Ci, const std::vector<float>& w,
                                   const std::vector<float>& b, int64_t Co, const ConvConfig& c) {
  const int To = c.out_frames(), Ho = c.out_height(), Wo = c.out_width();
  std::vector<double> y(size_t(c.out_rows() * Co));
  for (int n = 0; n < c.batch; ++n)
    for (int t = 0; t < To; ++t)
      for (int h = 0; h < Ho; ++h)
        for (int ww = 0; ww < Wo; ++ww)
          for (int64_t o = 0; o < Co; ++o) {
            double acc = b.empty() ? 0.0 : b[size_t(o)];
            for (int dt = 0; dt < c.kt; ++dt)
              for (int dh = 0; dh < c.kh; ++dh)
                for (int dw = 0; dw < c.kw; ++dw) {
                  const int ti = t * c.st + dt - c.pad_front, hi = h * c.sh + dh - c.pad_top,
                            wi = ww * c.sw + dw - c.pad_left;
                  if (ti < 0 || ti >= c.frames || hi < 0 || hi >= c.height || wi < 0 || wi >= c.width) continue;
                  const int64_t row = ((int64_t(n) * c.frames + ti) * c.height + hi) * c.width + wi;
                  const int64_t tap = (int64_t(dt) * c.kh + dh) * c.kw + dw;
                  for (int64_t ci = 0; ci < Ci; ++ci)
                    acc += double(x[size_t(row * Ci + ci)]) * w[size_t((tap * Ci + ci) * Co + o)];
                }
            y[size_t((((int64_t(n) * To + t) * Ho + h) * Wo + ww) * Co + o)] = acc;
          }
  return y;
}

void check_conv(const ConvConfig& c, int64_t Ci, int64_t Co, bool bias, const std::string& what) {
  CpuOps ops;
  const auto x = random_floats(size_t(c.in_rows() * Ci), 1);
  const auto w = random_floats(size_t(c.taps() * Ci * Co), 2);
  const auto b = bias ? random_floats(size_t(Co), 3) : std::vector<float>{};
  const std::vector<double> want = reference_conv(x, Ci, w, b, Co, c);
  const View xv = view(x.data(), c.in_rows(), Ci), wv = view(w.data(), c.taps() * Ci, Co);
  const View bv = bias ? view(b.data(), 1, Co) : View{};
  std::vector<float> y(size_t(c.out_rows() * Co), NAN);
  ops.conv3d_forward(xv, wv, bv, view(y.data(), c.out_rows(), Co), c);
  check_close(y, want, 1e-6, 0.0, what);
  // The frozen form: the weight packed once (per time tap), then the implicit GEMM.
  std::vector<float> packed(size_t(ops.packed_conv3d_elements(c.kt, int64_t(c.kh) * c.kw * Ci, Co)), NAN);
  ops.pack_conv3d(wv, c.kt, view(packed.data(), 1, int64_t(packed.size())));
  std::fill(y.begin(), y.end(), NAN);
  ops.packed_conv3d_forward(xv, view(packed.data(), 1, int64_t(packed.size())), bv, view(y.data(), c.out_rows(), Co),
                            c);
  check_close(y, want, 1e-6, 0.0, what + ", packed");
}

ConvConfig clip(int batch, int T, int H, int W) {
  ConvConfig c;
  c.batch = batch, c.frames = T, c.height = H, c.width = W;
  return c;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(video_ops)

BOOST_AUTO_TEST_CASE(conv3d_matches_a_double_convolution) {
  ConvConfig causal = clip(2, 4, 5, 6);  // the VAE's CausalConv3d: time padded 2 in front, space 1 around
  causal.kt = causal.kh = causal.kw = 3, causal.pad_front = 2, causal.pad_top = causal.pad_bottom = 1;
  causal.pad_left = causal.pad_right = 1;
  check_conv(causal, 7, 5, true, "causal k3");
  ConvConfig one_frame = causal;  // frame 0 alone: two of its three time taps read padding
  one_frame.batch = 1, one_frame.frames = 1;
  check_conv(one_frame, 4, 6, true, "causal k3, one frame");
  ConvConfig down2d = clip(1, 3, 6, 8);  // ZeroPad2d(0, 1, 0, 1) + Conv2d 3×3 stride 2, per frame
  down2d.kh = down2d.kw = 3, down2d.sh = down2d.sw = 2, down2d.pad_bottom = down2d.pad_right = 1;
  check_conv(down2d, 6, 6, true, "conv2d stride 2");
  ConvConfig time_conv = clip(2, 5, 3, 2);  // Conv3d (3, 1, 1) stride (2, 1, 1), no padding
  time_conv.kt = 3, time_conv.st = 2;
  check_conv(time_conv, 5, 5, true, "temporal stride 2");
  check_conv(clip(2, 2, 3, 4), 9, 4, false, "1x1x1, no bias");
  // Wide enough for the packed GEMM's edges: a 3×3×50 tap spans two K blocks of 384 and splits a
  // pixel's channels between them, 40 output channels fill one column panel of 32 and part of a
  // second, and 11 × 13 positions make a full block of 96 rows and a partial one.
  ConvConfig wide = clip(2, 3, 11, 13);
  wide.kt = wide.kh = wide.kw = 3, wide.pad_front = 2, wide.pad_top = wide.pad_bottom = 1;
  wide.pad_left = wide.pad_right = 1;
  check_conv(wide, 50, 40, true, "causal k3, wide");
}

BOOST_AUTO_TEST_CASE(pixel_unshuffle_matches_its_definition) {
  CpuOps ops;
  const int64_t C = 3;
  struct Case {
    UnshuffleConfig u;
    const char* what;
  };
  UnshuffleConfig patchify{2, 2, 4, 6, 1, 2, 0, true, 1};
  UnshuffleConfig avg_down{1, 3, 4, 4, 2, 2, 1, false, 4};
  UnshuffleConfig patches{1, 1, 14, 7, 1, 7, 0, false, 1};
  for (const Case& k : {Case{patchify, "patchify"}, Case{avg_down, "avg_down"}, Case{patches, "patch rows"}}) {
    const UnshuffleConfig& u = k.u;
    const int64_t rows = int64_t(u.batch) * u.frames * u.height * u.width;
    const auto x = random_floats(size_t(rows * C), 4);
    const int To = u.out_frames(), Ho = u.height / u.fs, Wo = u.width / u.fs;
    const int64_t F = int64_t(u.ft) * u.fs * u.fs, cols = C * F / u.group, out_rows = int64_t(u.batch) * To * Ho * Wo;
    std::vector<float> y(size_t(out_rows * cols));
    ops.pixel_unshuffle_forward(view(x.data(), rows, C), view(y.data(), out_rows, cols), u);
    const std::vector<double> want = test::unshuffle_reference(x, C, u);
    check_close(y, want, 1e-6, 0.0, k.what);
  }
}

BOOST_AUTO_TEST_CASE(channel_rmsnorm_matches_its_definition) {
  CpuOps ops;
  const int64_t N = 9, C = 40;
  auto x = random_floats(size_t(N * C), 5, -3, 3);
  for (int64_t c = 0; c < C; ++c) x[size_t(2 * C + c)] = 0.0f;  // a zero row: the 1e-12 floor, output 0
  const auto gamma = random_floats(size_t(C), 6, 0.5f, 1.5f);
  for (Activation act : {Activation::none, Activation::silu}) {
    std::vector<double> want(x.size());
    for (int64_t i = 0; i < N; ++i) {
      double ss = 0;
      for (int64_t c = 0; c < C; ++c) ss += double(x[size_t(i * C + c)]) * x[size_t(i * C + c)];
      for (int64_t c = 0; c < C; ++c) {
        const double v = x[size_t(i * C + c)] / std::max(std::sqrt(ss), 1e-12) * std::sqrt(double(C)) * gamma[size_t(c)];
        want[size_t(i * C + c)] = act == Activation::silu ? v / (1 + std::exp(-v)) : v;
      }
    }
    std::vector<float> y = x;  // in place
    ops.channel_rmsnorm_forward(view(y.data(), N, C), view(gamma.data(), 1, C), act, view(y.data(), N, C));
    check_close(y, want, 2e-6, 0.0, str("channel_rmsnorm act ", int(act)));
  }
}

BOOST_AUTO_TEST_CASE(bad_video_calls_are_one_line) {
  CpuOps ops;
  std::vector<float> x(2 * 4 * 4 * 8), w(27 * 8 * 8), y(2 * 4 * 4 * 8);
  ConvConfig c = clip(1, 2, 4, 4);
  c.kt = c.kh = c.kw = 3, c.pad_front = 2, c.pad_top = c.pad_bottom = c.pad_left = c.pad_right = 1;
  // A weight for another input width.
  BOOST_TEST(error_of([&] {
               ops.conv3d_forward(view(x.data(), 32, 8), view(w.data(), 27 * 7, 8), View{}, view(y.data(), 32, 8), c);
             }) == "conv3d_forward: weight must be [kt·kh·kw·Ci, Co] = [216, 8]; x [32, 8], weight [189, 8], bias "
                   "absent, y [32, 8]");
  // A packed weight of another size (the plain weight's, say).
  BOOST_TEST(error_of([&] {
               ops.packed_conv3d_forward(view(x.data(), 32, 8), view(w.data(), 1, 100), View{}, view(y.data(), 32, 8),
                                         c);
             }) == str("packed_conv3d_forward: packed must be the packed form of a weight [216, 8] (",
                       ops.packed_conv3d_elements(3, 72, 8), " elements of x's dtype); x [32, 8], packed [1, 100], bias "
                       "absent, y [32, 8]"));
  ConvConfig wide = c;
  wide.pad_back = 3;
  BOOST_TEST(error_of([&] {
               ops.conv3d_forward(view(x.data(), 32, 8), view(w.data(), 216, 8), View{}, view(y.data(), 32, 8), wide);
             }) == "conv3d_forward: padding (front, back, top, bottom, left, right) must be in [0, kernel): 3 against "
                   "a kernel of 3; x [32, 8], weight [216, 8], bias absent, y [32, 8]");
  UnshuffleConfig odd{1, 2, 4, 5, 1, 2, 0, false, 1};
  BOOST_TEST(error_of([&] {
               ops.pixel_unshuffle_forward(view(x.data(), 40, 8), view(y.data(), 8, 32), odd);
             }) == "pixel_unshuffle_forward: the space factor 2 must divide H 4 and W 5; x [40, 8], y [8, 32]");
  BOOST_TEST(error_of([&] {
               ops.channel_rmsnorm_forward(view(x.data(), 32, 8), view(w.data(), 1, 8), Activation::gelu_tanh,
                                           view(y.data(), 32, 8));
             }) == "channel_rmsnorm_forward: the activation must be none or silu; x [32, 8], gamma [1, 8], y [32, 8]");
}

BOOST_AUTO_TEST_SUITE_END()
