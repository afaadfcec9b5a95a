#include "encoders/eagle/frame_transform.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "encoders/frames/resize.hpp"

namespace emb::encoders {

namespace {

// torchvision's ColorJitter ranges as GR00T-N1.5 sets them (data_config.py 174-180).
constexpr double kBrightness = 0.3, kContrast = 0.4, kSaturation = 0.5, kHue = 0.08;

inline float clamp01(float x) { return std::min(std::max(x, 0.0f), 1.0f); }

// torchvision's luma, in its order: r·0.2989 + g·0.587 + b·0.114 (float32).
inline float luma(const float* p) { return p[0] * 0.2989f + p[1] * 0.587f + p[2] * 0.114f; }

// _blend for float images: clamp(x·ratio + other·(1 − ratio)); 1 − ratio is formed in double
// (a Python float) and rounded, as torch converts the scalar.
struct Blend {
  float ratio, rest;
  explicit Blend(float r) : ratio(r), rest(float(1.0 - double(r))) {}
  float operator()(float x, float other) const { return clamp01(x * ratio + other * rest); }
};

// torch.remainder(a, 1) for floats: fmod, moved into [0, 1) when negative.
inline float remainder1(float a) {
  float m = std::fmod(a, 1.0f);
  if (m != 0.0f && m < 0.0f) m += 1.0f;
  return m;
}

// torchvision's _rgb_to_hsv, hue shift, _hsv_to_rgb on one pixel, in its float32 steps.
void shift_hue(float* p, float hue) {
  const float r = p[0], g = p[1], b = p[2];
  const float maxc = std::max(std::max(r, g), b), minc = std::min(std::min(r, g), b);
  const bool eqc = maxc == minc;
  const float span = maxc - minc;
  const float s = span / (eqc ? 1.0f : maxc);
  const float div = eqc ? 1.0f : span;
  const float rc = (maxc - r) / div, gc = (maxc - g) / div, bc = (maxc - b) / div;
  const bool max_r = maxc == r, max_g = maxc == g && !max_r, max_b = !max_r && !(maxc == g);
  const float h = ((bc - gc) * float(max_r) + ((rc + 2.0f) - bc) * float(max_g)) + ((gc + 4.0f) - rc) * float(max_b);
  float hh = std::fmod(h * float(1.0 / 6.0) + 1.0f, 1.0f);
  hh = remainder1(hh + hue);
  const float h6 = hh * 6.0f;
  const float fl = std::floor(h6);
  const float f = h6 - fl;
  int64_t i = int64_t(fl) % 6;
  if (i < 0) i += 6;
  const float v = maxc, sf = s * f;
  const float pp = clamp01((1.0f - s) * v), q = clamp01((1.0f - sf) * v), t = clamp01((sf + (1.0f - s)) * v);
  const float vpqt[4] = {v, pp, q, t};
  // sector → (r, g, b) among (v, p, q, t): 0 (v,t,p) 1 (q,v,p) 2 (p,v,t) 3 (p,q,v) 4 (t,p,v) 5 (v,p,q)
  static constexpr int kPick[3][6] = {{0, 2, 1, 1, 3, 0}, {3, 0, 0, 2, 1, 1}, {1, 1, 3, 0, 0, 2}};
  for (int c = 0; c < 3; ++c) p[c] = vpqt[kPick[c][i]];
}

// ColorJitter on one float32 frame [S, S, 3] in [0, 1], every step clamped.
void color_jitter(float* x, int64_t pixels, const ColorJitter& j) {
  for (int op : j.order) {
    if (op == 0) {
      for (int64_t e = 0; e < pixels * 3; ++e) x[e] = clamp01(x[e] * j.brightness);
    } else if (op == 1) {
      // The mean luma of the frame (torch sums in float32 in its own order; a double sum
      // rounded to float differs in the last bit at most).
      double sum = 0;
      for (int64_t p = 0; p < pixels; ++p) sum += luma(x + 3 * p);
      const float mean = float(sum / double(pixels));
      const Blend blend(j.contrast);
      for (int64_t e = 0; e < pixels * 3; ++e) x[e] = blend(x[e], mean);
    } else if (op == 2) {
      const Blend blend(j.saturation);
      for (int64_t p = 0; p < pixels; ++p) {
        const float l = luma(x + 3 * p);
        for (int c = 0; c < 3; ++c) x[3 * p + c] = blend(x[3 * p + c], l);
      }
    } else {
      for (int64_t p = 0; p < pixels; ++p) shift_hue(x + 3 * p, j.hue);
    }
  }
}

}  // namespace

Crop centre_crop(int64_t H, int64_t W) {
  Crop c;
  c.height = int64_t(double(H) * kGr00tCropScale), c.width = int64_t(double(W) * kGr00tCropScale);
  c.top = int64_t(std::nearbyint(double(H - c.height) / 2.0));
  c.left = int64_t(std::nearbyint(double(W - c.width) / 2.0));
  return c;
}

FrameAugmentation draw_augmentation(int64_t H, int64_t W, uint64_t seed, uint64_t sample, uint64_t variant) {
  const CounterRng rng(seed, RngStream::augment, sample, variant);
  const Crop c = centre_crop(H, W);
  auto below = [&](uint64_t i, int64_t n) { return std::min<int64_t>(n - 1, int64_t(rng.uniform(i) * double(n))); };
  auto uniform = [&](uint64_t i, double lo, double hi) { return float(lo + (hi - lo) * rng.uniform(i)); };
  FrameAugmentation a;
  a.crop_top = below(0, H - c.height + 1), a.crop_left = below(1, W - c.width + 1);
  ColorJitter j;
  for (int k = 3; k > 0; --k) std::swap(j.order[size_t(k)], j.order[size_t(below(uint64_t(2 + k), k + 1))]);
  j.brightness = uniform(6, 1 - kBrightness, 1 + kBrightness);
  j.contrast = uniform(7, 1 - kContrast, 1 + kContrast);
  j.saturation = uniform(8, 1 - kSaturation, 1 + kSaturation);
  j.hue = uniform(9, -kHue, kHue);
  a.jitter = j;
  return a;
}

std::vector<uint8_t> gr00t_frames(const uint8_t* frames, int64_t N, int64_t H, int64_t W, int image,
                                  const FrameAugmentation* augmentation, const std::string& where) {
  EMB_CHECK(N >= 0 && H >= 2 && W >= 2, where, ": frames must be [N, H, W, 3] with H, W >= 2, not [", N, ", ", H,
            ", ", W, ", 3]");
  Crop c = centre_crop(H, W);
  if (augmentation) {
    EMB_CHECK(augmentation->crop_top >= 0 && augmentation->crop_top <= H - c.height && augmentation->crop_left >= 0 &&
                  augmentation->crop_left <= W - c.width,
              where, ": crop offset (", augmentation->crop_top, ", ", augmentation->crop_left, ") puts a ", c.height,
              "x", c.width, " crop outside a ", H, "x", W, " frame");
    c.top = augmentation->crop_top, c.left = augmentation->crop_left;
  }
  const frames::ResizeTable rows = frames::aa_bilinear_table(c.height, image), cols = frames::aa_bilinear_table(c.width, image);
  const int64_t S = image;
  std::vector<uint8_t> out(size_t(N * S * S * 3));
  std::vector<float> cropped(size_t(c.height * c.width * 3)), resized(size_t(S * S * 3));
  for (int64_t n = 0; n < N; ++n) {
    const uint8_t* frame = frames + n * H * W * 3;
    for (int64_t y = 0; y < c.height; ++y)
      for (int64_t x = 0; x < c.width * 3; ++x)
        cropped[size_t(y * c.width * 3 + x)] = float(frame[(c.top + y) * W * 3 + c.left * 3 + x]) / 255.0f;
    frames::resize_hwc(cropped.data(), 3, rows, cols, resized.data());
    if (augmentation && augmentation->jitter) color_jitter(resized.data(), S * S, *augmentation->jitter);
    uint8_t* dst = out.data() + n * S * S * 3;
    for (int64_t e = 0; e < S * S * 3; ++e) dst[e] = uint8_t(resized[size_t(e)] * 255.0f);
  }
  return out;
}

void eagle_patch_rows(const uint8_t* frames, int64_t N, int image, int patch, float* rows) {
  const int64_t grid = image / patch, F = 3 * int64_t(patch) * patch;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t py = 0; py < grid; ++py)
      for (int64_t px = 0; px < grid; ++px) {
        float* row = rows + ((n * grid + py) * grid + px) * F;
        for (int c = 0; c < 3; ++c)
          for (int y = 0; y < patch; ++y)
            for (int x = 0; x < patch; ++x) {
              const uint8_t u = frames[((n * image + py * patch + y) * image + px * patch + x) * 3 + c];
              row[(int64_t(c) * patch + y) * patch + x] = (float(u) - 127.5f) / 127.5f;
            }
      }
}

}  // namespace emb::encoders
