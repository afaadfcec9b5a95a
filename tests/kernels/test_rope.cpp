#include <boost/test/unit_test.hpp>

#include "kernel_check.hpp"
#include "kernels/cpu/rope.hpp"

using namespace emb;
using namespace emb::test;

namespace {

// Every pair set to (1, 0) rotates to (cos φ, sin φ): returns the angles φ the kernel applied
// to head `h` of a single token at `pos`.
std::vector<double> applied_angles(const int32_t* pos, int H, int hd, int h, cpu::RopeMode mode) {
  std::vector<float> x(H * hd, 0.0f);
  for (int k = 0; k < H * hd / 2; ++k) x[2 * k] = 1.0f;
  cpu::rope_forward(x.data(), pos, 1, H, hd, mode);
  std::vector<double> angles;
  for (int k = 0; k < hd / 2; ++k) angles.push_back(std::atan2(x[h * hd + 2 * k + 1], x[h * hd + 2 * k]));
  return angles;
}

}  // namespace

BOOST_AUTO_TEST_CASE(rope_3d_angles_by_hand) {
  // hd = 12: 6 pairs, c_h = c_w = 2, c_f = 2, order f, h, w; 10000^(-1/2) = 0.01.
  const int32_t pos[3] = {3, 1, 2};
  check_close(applied_angles(pos, 2, 12, 1, cpu::RopeMode::d3), std::vector<double>{3, 0.03, 1, 0.01, 2, 0.02}, 0.0,
              1e-6, "3d hd=12");
  // hd = 16: 8 pairs, c_h = c_w = 2, c_f = 4 with 10000^(-k/4) = 1, 0.1, 0.01, 0.001.
  check_close(applied_angles(pos, 1, 16, 0, cpu::RopeMode::d3),
              std::vector<double>{3, 0.3, 0.03, 0.003, 1, 0.01, 2, 0.02}, 0.0, 1e-6, "3d hd=16");
  // 1d: all 4 pairs on f.
  check_close(applied_angles(pos, 1, 8, 0, cpu::RopeMode::d1), std::vector<double>{3, 0.3, 0.03, 0.003}, 0.0, 1e-6,
              "1d hd=8");
}

BOOST_AUTO_TEST_CASE(rope_backward_is_adjoint_and_inverse) {
  const int64_t T = 9;
  const int H = 3, hd = 20;
  std::vector<int32_t> pos(T * 3);
  for (int64_t t = 0; t < T; ++t) pos[t * 3] = int32_t(t), pos[t * 3 + 1] = int32_t(7 - t), pos[t * 3 + 2] = int32_t(2 * t);
  const auto x = random_floats(T * H * hd, 81), y = random_floats(T * H * hd, 82);
  for (auto mode : {cpu::RopeMode::d1, cpu::RopeMode::d3}) {
    auto rx = x, ry = y;
    cpu::rope_forward(rx.data(), pos.data(), T, H, hd, mode);
    cpu::rope_backward(ry.data(), pos.data(), T, H, hd, mode);
    double lhs = 0.0, rhs = 0.0;
    for (size_t i = 0; i < x.size(); ++i) lhs += double(rx[i]) * y[i], rhs += double(x[i]) * ry[i];
    BOOST_TEST(std::fabs(lhs - rhs) <= 1e-5 * std::fabs(lhs) + 1e-5, "<Rx, y> = " << lhs << ", <x, Rᵀy> = " << rhs);
    cpu::rope_backward(rx.data(), pos.data(), T, H, hd, mode);
    check_close(rx, x, 0.0, 1e-6, "backward(forward(x)) = x");
  }
  auto same = x;
  cpu::rope_forward(same.data(), pos.data(), T, H, hd, cpu::RopeMode::none);
  check_close(same, x, 0.0, 0.0, "rope none");
}

// Per-token modes (DreamZero: video tokens 3d, action and state tokens 1d, none skipped) give
// each token the rotation its mode gives alone, bit for bit.
BOOST_AUTO_TEST_CASE(rope_per_token_modes) {
  const int64_t T = 7;
  const int H = 2, hd = 16;
  std::vector<int32_t> pos(T * 3);
  for (int64_t t = 0; t < T; ++t)
    pos[t * 3] = int32_t(3 * t + 1), pos[t * 3 + 1] = int32_t(t % 3), pos[t * 3 + 2] = int32_t(5 - t);
  using M = cpu::RopeMode;
  const std::vector<int32_t> modes = {int32_t(M::d3), int32_t(M::d1), int32_t(M::d3), int32_t(M::none),
                                      int32_t(M::d1), int32_t(M::d1), int32_t(M::d3)};
  const auto x = random_floats(T * H * hd, 83);
  for (bool backward : {false, true}) {
    auto mixed = x;
    (backward ? cpu::rope_backward : cpu::rope_forward)(mixed.data(), pos.data(), T, H, hd, cpu::RopeMode::d3,
                                                         modes.data());
    for (int64_t t = 0; t < T; ++t) {
      std::vector<float> alone(x.begin() + t * H * hd, x.begin() + (t + 1) * H * hd);
      (backward ? cpu::rope_backward : cpu::rope_forward)(alone.data(), &pos[t * 3], 1, H, hd, cpu::RopeMode(modes[t]),
                                                           nullptr);
      BOOST_TEST(std::equal(alone.begin(), alone.end(), mixed.begin() + t * H * hd), "token " << t);
    }
  }
}
