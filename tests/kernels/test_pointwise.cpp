#include <boost/test/unit_test.hpp>

#include "core/error.hpp"
#include "kernel_check.hpp"
#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/embedding.hpp"
#include "kernels/cpu/norm_modulate.hpp"
#include "kernels/cpu/residual.hpp"

using namespace emb;
using namespace emb::test;

BOOST_AUTO_TEST_CASE(modulate_in_place_chunks) {
  // scale and shift are chunks 1 and 0 of one [N, 3C] tensor; chunk 2 must stay untouched.
  const int64_t N = 6;
  const int C = 10, ld = 3 * C;
  const auto x = random_floats(N * C, 51), mod = random_floats(N * ld, 52), w_loss = random_floats(N * C, 53);
  std::vector<float> y(N * C);
  cpu::modulate_forward(x.data(), mod.data() + C, mod.data(), ld, y.data(), N, C);
  auto xd = to_double(x), modd = to_double(mod);
  auto ref = [&] {
    std::vector<double> r(N * C);
    for (int64_t i = 0; i < N; ++i)
      for (int c = 0; c < C; ++c) r[i * C + c] = xd[i * C + c] * (1 + modd[i * ld + C + c]) + modd[i * ld + c];
    return r;
  };
  check_close(y, ref(), 1e-6, 0.0, "modulate y");

  const auto dx0 = random_floats(N * C, 54), dmod0 = random_floats(N * ld, 55);
  auto dx = dx0, dmod = dmod0;
  cpu::modulate_backward(x.data(), mod.data() + C, ld, w_loss.data(), dx.data(), dmod.data() + C, dmod.data(), N, C);
  auto loss = [&] { return weighted_sum(ref(), w_loss); };
  check_close(added(dx, dx0), numeric_grad(loss, xd), 1e-5, 1e-7, "modulate dx");
  check_close(added(dmod, dmod0), numeric_grad(loss, modd), 1e-5, 1e-7, "modulate dscale/dshift");
}

BOOST_AUTO_TEST_CASE(gated_residual_with_and_without_gate) {
  const int64_t N = 5;
  const int C = 9, ld = 2 * C;
  const auto x0 = random_floats(N * C, 61), gate = random_floats(N * ld, 62), y = random_floats(N * C, 63);
  const auto w_loss = random_floats(N * C, 64);
  for (bool gated : {true, false}) {
    const float* g = gated ? gate.data() + C : nullptr;
    auto x = x0;
    cpu::gated_residual_forward(x.data(), g, ld, y.data(), N, C);
    auto yd = to_double(y), gd = to_double(gate);
    auto ref = [&] {
      std::vector<double> r(N * C);
      for (int64_t i = 0; i < N; ++i)
        for (int c = 0; c < C; ++c) r[i * C + c] = x0[i * C + c] + (gated ? gd[i * ld + C + c] : 1.0) * yd[i * C + c];
      return r;
    };
    check_close(x, ref(), 1e-6, 0.0, "gated residual x");
    const auto dy0 = random_floats(N * C, 65), dgate0 = random_floats(N * ld, 66);
    auto dy = dy0, dgate = dgate0;
    cpu::gated_residual_backward(g, ld, y.data(), w_loss.data(), dy.data(), gated ? dgate.data() + C : nullptr, N, C);
    auto loss = [&] { return weighted_sum(ref(), w_loss); };
    check_close(added(dy, dy0), numeric_grad(loss, yd), 1e-5, 1e-7, "gated residual dy");
    check_close(added(dgate, dgate0), numeric_grad(loss, gd), 1e-5, 1e-7, "gated residual dgate");
  }
}

namespace {

using ActForward = void (*)(const float*, float*, int64_t);
using ActBackward = void (*)(const float*, const float*, float*, int64_t);

void check_activation(ActForward fwd, ActBackward bwd, double (*ref)(double), const std::string& name) {
  auto x = random_floats(301, 71, -6.0f, 6.0f);
  for (float& v : x)
    if (std::fabs(v) < 1e-3f) v = 0.5f;  // keep relu's kink out of the differences
  const auto w_loss = random_floats(x.size(), 72);
  std::vector<float> y(x.size());
  fwd(x.data(), y.data(), x.size());
  auto xd = to_double(x);
  auto apply = [&] {
    std::vector<double> r(xd.size());
    for (size_t i = 0; i < xd.size(); ++i) r[i] = ref(xd[i]);
    return r;
  };
  check_close(y, apply(), 1e-6, 1e-7, name + " forward");
  const auto dx0 = random_floats(x.size(), 73);
  auto dx = dx0;
  bwd(x.data(), w_loss.data(), dx.data(), x.size());
  check_close(added(dx, dx0), numeric_grad([&] { return weighted_sum(apply(), w_loss); }, xd), 1e-5, 1e-6,
              name + " backward");
}

// Far from 0 gelu_tanh and silu are x or 0 in float, with slope 1 or 0; the backward must stay
// finite even where x³ would overflow.
void check_saturation(ActForward fwd, ActBackward bwd, const std::string& name) {
  const std::vector<float> x = {-1e30f, -1e4f, -200.0f, 200.0f, 1e4f, 1e30f};
  std::vector<float> y(x.size()), dx(x.size(), 0.0f);
  const std::vector<float> dy(x.size(), 1.0f);
  fwd(x.data(), y.data(), x.size());
  bwd(x.data(), dy.data(), dx.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    BOOST_TEST(y[i] == (x[i] > 0 ? x[i] : 0.0f), name << "(" << x[i] << ") = " << y[i]);
    BOOST_TEST(dx[i] == (x[i] > 0 ? 1.0f : 0.0f), name << "'(" << x[i] << ") = " << dx[i]);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(activations) {
  check_activation(cpu::gelu_tanh_forward, cpu::gelu_tanh_backward,
                   [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); },
                   "gelu_tanh");
  check_activation(cpu::silu_forward, cpu::silu_backward, [](double x) { return x / (1 + std::exp(-x)); }, "silu");
  check_activation(cpu::relu_forward, cpu::relu_backward, [](double x) { return x > 0 ? x : 0.0; }, "relu");
  check_activation(cpu::gelu_erf_forward, cpu::gelu_erf_backward,
                   [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, "gelu_erf");
}

BOOST_AUTO_TEST_CASE(smooth_activations_saturate) {
  check_saturation(cpu::gelu_tanh_forward, cpu::gelu_tanh_backward, "gelu_tanh");
  check_saturation(cpu::silu_forward, cpu::silu_backward, "silu");
}

// Wan's layout (cos half first, divisor n/2), diffusers' Timesteps(flip_sin_to_cos=True,
// downscale_freq_shift=1) (cos first, divisor n/2 − 1: GR00T-N1.5's time encoder, whose last
// frequency is exactly 1e-4) and the action encoders' (sin half first).
BOOST_AUTO_TEST_CASE(sinus_embedding_layouts) {
  const int n = 256;
  const std::vector<float> t = {0.0f, 1.0f, 999.0f};
  for (const auto& [cos_first, shift] : {std::pair{true, 0}, std::pair{true, 1}, std::pair{false, 0}}) {
    BOOST_TEST_CONTEXT("cos_first " << cos_first << " shift " << shift) {
      std::vector<float> out(t.size() * n);
      cpu::sinus_embedding(t.data(), 1, out.data(), t.size(), n, cos_first, shift);
      std::vector<double> want(out.size());
      const int cos_at = cos_first ? 0 : n / 2, sin_at = cos_first ? n / 2 : 0;
      for (size_t i = 0; i < t.size(); ++i)
        for (int k = 0; k < n / 2; ++k) {
          const double f = std::exp(-std::log(10000.0) * k / (n / 2 - shift));
          want[i * n + cos_at + k] = std::cos(t[i] * f);
          want[i * n + sin_at + k] = std::sin(t[i] * f);
        }
      check_close(out, want, 0.0, 1e-7, "sinus");
      BOOST_TEST(out[cos_at] == 1.0f);  // t = 0: the cos half is 1
      BOOST_TEST(out[sin_at] == 0.0f);  // and the sin half 0
    }
  }
  // t = 1: the last frequency of diffusers' layout is 10⁻⁴ (k = 127 over 127).
  std::vector<float> out(n);
  cpu::sinus_embedding(t.data() + 1, 1, out.data(), 1, n, true, 1);
  BOOST_TEST(double(out[n - 1]) == std::sin(1e-4), boost::test_tools::tolerance(1e-6));
  BOOST_CHECK_THROW(cpu::sinus_embedding(t.data(), 1, out.data(), 1, 7, true, 0), emb::Error);
  BOOST_CHECK_THROW(cpu::sinus_embedding(t.data(), 1, out.data(), 1, 8, true, 4), emb::Error);
}

// A timestep that is not an fp32 value (wan's 1000·σ of timestep id 1) as the sum of two floats:
// the angles are those of the double timestep, where one float would be up to 3e-5 off.
BOOST_AUTO_TEST_CASE(sinus_embedding_of_a_two_float_timestep) {
  const int n = 256;
  const double s = 1.0 - 1.0 / 1000, t = 1000 * 5 * s / (1 + 4 * s);
  const float hi = float(t), lo = float(t - double(hi));
  const std::vector<float> split = {hi, lo};
  std::vector<float> out(n);
  cpu::sinus_embedding(split.data(), 2, out.data(), 1, n, true, 0);
  std::vector<double> want(n);
  for (int k = 0; k < n / 2; ++k) {
    const double f = std::exp(-std::log(10000.0) * k / (n / 2));
    want[k] = std::cos(t * f), want[n / 2 + k] = std::sin(t * f);
  }
  check_close(out, want, 0.0, 1e-7, "sinus of hi + lo");
  BOOST_TEST(std::fabs(std::sin(double(hi)) - std::sin(t)) > 1e-6);  // one float alone would not do
}
