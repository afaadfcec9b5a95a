#include "kernels/cpu/rope.hpp"

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

namespace {

// For each of the hd/2 pairs: the axis it rotates on (0 f, 1 h, 2 w) and 10000^(−k/c).
struct RopePairs {
  std::vector<int> axis;
  std::vector<double> inv_freq;
};

RopePairs rope_pairs(int hd, RopeMode mode) {
  const int pairs = hd / 2;
  const int c_hw = mode == RopeMode::d3 ? pairs / 3 : 0;
  const int counts[3] = {pairs - 2 * c_hw, c_hw, c_hw};
  RopePairs r;
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < counts[a]; ++k) {
      r.axis.push_back(a);
      r.inv_freq.push_back(std::pow(10000.0, -double(k) / counts[a]));
    }
  return r;
}

// Rotates every pair of x by +φ (direction 1) or −φ (direction −1, the inverse and the backward).
void rotate(float* x, const int32_t* pos, int64_t T, int H, int hd, RopeMode mode, const int32_t* token_modes,
            int direction) {
  if (mode == RopeMode::none && !token_modes) return;
  EMB_CHECK(hd % 2 == 0, "rope: head dim ", hd, " must be even");
  const RopePairs by_mode[3] = {RopePairs{}, rope_pairs(hd, RopeMode::d1), rope_pairs(hd, RopeMode::d3)};
  const int n_pairs = hd / 2;
  struct Angles {
    std::vector<float> cos_phi, sin_phi;
  };
  parallel_for_scratch(
      T, T * H * hd >= (1 << 15),
      [n_pairs] { return Angles{std::vector<float>(n_pairs), std::vector<float>(n_pairs)}; },
      [&](Angles& a, int64_t t) {
        const RopeMode m = token_modes ? RopeMode(token_modes[t]) : mode;
        if (m == RopeMode::none) return;
        const RopePairs& pairs = by_mode[int(m)];
        for (int k = 0; k < n_pairs; ++k) {
          const double phi = pos[t * 3 + pairs.axis[k]] * pairs.inv_freq[k];
          a.cos_phi[k] = static_cast<float>(std::cos(phi));
          a.sin_phi[k] = static_cast<float>(direction * std::sin(phi));
        }
        for (int h = 0; h < H; ++h) {
          float* xh = x + (t * H + h) * hd;
          for (int k = 0; k < n_pairs; ++k) {
            const float x0 = xh[2 * k], x1 = xh[2 * k + 1];
            xh[2 * k] = x0 * a.cos_phi[k] - x1 * a.sin_phi[k];
            xh[2 * k + 1] = x0 * a.sin_phi[k] + x1 * a.cos_phi[k];
          }
        }
      });
}

}  // namespace

void rope_forward(float* x, const int32_t* pos, int64_t T, int H, int hd, RopeMode mode, const int32_t* token_modes) {
  rotate(x, pos, T, H, hd, mode, token_modes, 1);
}

void rope_backward(float* dx, const int32_t* pos, int64_t T, int H, int hd, RopeMode mode,
                   const int32_t* token_modes) {
  rotate(dx, pos, T, H, hd, mode, token_modes, -1);
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) {
  fp32_contiguous(check_rope("rope_forward", x, pos, cfg));
  cpu::rope_forward(f(x), pos, x.rows, cfg.heads, cfg.head_dim, cfg.mode, cfg.token_modes);
}

void CpuOps::rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) {
  fp32_contiguous(check_rope("rope_backward", dx, pos, cfg));
  cpu::rope_backward(f(dx), pos, dx.rows, cfg.heads, cfg.head_dim, cfg.mode, cfg.token_modes);
}

}  // namespace emb
