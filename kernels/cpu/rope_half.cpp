#include "kernels/cpu/rope_half.hpp"

#include <cmath>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {

void rotate(float* x, const int32_t* pos, int64_t T, int H, int hd, float theta, float direction) {
  const int half = hd / 2;
  const std::vector<float> inv = rope_half_inv_freq(hd, theta);
  struct Angles {
    std::vector<float> c, s;
  };
  parallel_for_scratch(
      T, T * H * hd >= (1 << 15),
      [half] { return Angles{std::vector<float>(size_t(half)), std::vector<float>(size_t(half))}; },
      [&](Angles& cs, int64_t t) {
        std::vector<float>& c = cs.c;
        std::vector<float>& s = cs.s;
        for (int i = 0; i < half; ++i) {
          const float angle = float(pos[t]) * inv[size_t(i)];
          c[size_t(i)] = float(std::cos(double(angle)));
          s[size_t(i)] = direction * float(std::sin(double(angle)));
        }
        for (int h = 0; h < H; ++h) {
          float* xh = x + (t * H + h) * hd;
          for (int i = 0; i < half; ++i) {
            const float a = xh[i], b = xh[i + half];
            xh[i] = a * c[size_t(i)] - b * s[size_t(i)];
            xh[i + half] = b * c[size_t(i)] + a * s[size_t(i)];
          }
        }
      });
}

}  // namespace

void rope_half_forward(float* x, const int32_t* pos, int64_t T, int H, int hd, float theta) {
  rotate(x, pos, T, H, hd, theta, 1.0f);
}

void rope_half_backward(float* dx, const int32_t* pos, int64_t T, int H, int hd, float theta) {
  rotate(dx, pos, T, H, hd, theta, -1.0f);
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::rope_half_forward(const View& x, const int32_t* pos, const RopeHalfConfig& cfg) {
  fp32(check_rope_half("rope_half_forward", x, pos, cfg));
  cpu::rope_half_forward(f(x), pos, x.rows, cfg.heads, cfg.head_dim, cfg.theta);
}

void CpuOps::rope_half_backward(const View& dx, const int32_t* pos, const RopeHalfConfig& cfg) {
  fp32(check_rope_half("rope_half_backward", dx, pos, cfg));
  cpu::rope_half_backward(f(dx), pos, dx.rows, cfg.heads, cfg.head_dim, cfg.theta);
}

}  // namespace emb
