#include <boost/test/unit_test.hpp>

#include "kernel_check.hpp"
#include "kernels/cpu/adamw.hpp"

using namespace emb;
using namespace emb::test;

BOOST_AUTO_TEST_CASE(adamw_three_steps_match_scalar_formula) {
  cpu::AdamWConfig cfg;
  cfg.lr = 1e-2f;
  cfg.weight_decay = 0.1f;
  const int64_t n = 50;
  const float grad_scale = 0.5f;
  for (float decay_mult : {1.0f, 0.0f}) {
    auto p = random_floats(n, 91);
    std::vector<float> m(n, 0.f), v(n, 0.f);
    auto pd = to_double(p);
    std::vector<double> md(n, 0.0), vd(n, 0.0);
    for (int64_t step = 1; step <= 3; ++step) {
      const auto g = random_floats(n, 92 + step);
      cpu::adamw_step(p.data(), g.data(), m.data(), v.data(), n, cfg, step, grad_scale, decay_mult);
      for (int64_t i = 0; i < n; ++i) {
        const double gi = double(g[i]) * grad_scale;
        md[i] = cfg.beta1 * md[i] + (1 - double(cfg.beta1)) * gi;
        vd[i] = cfg.beta2 * vd[i] + (1 - double(cfg.beta2)) * gi * gi;
        const double m_hat = md[i] / (1 - std::pow(double(cfg.beta1), step));
        const double v_hat = vd[i] / (1 - std::pow(double(cfg.beta2), step));
        pd[i] -= cfg.lr * (m_hat / (std::sqrt(v_hat) + cfg.eps) + double(cfg.weight_decay) * decay_mult * pd[i]);
      }
    }
    check_close(p, pd, 1e-5, 0.0, "adamw params");
    check_close(m, md, 1e-5, 0.0, "adamw m");
    check_close(v, vd, 1e-5, 0.0, "adamw v");
  }
}

BOOST_AUTO_TEST_CASE(sum_squares_and_clip_coefficient) {
  const auto g = random_floats(100003, 99);
  double want = 0.0;
  for (float x : g) want += double(x) * x;
  BOOST_TEST(std::fabs(cpu::sum_squares(g.data(), g.size()) - want) <= 1e-12 * want);
  BOOST_TEST(std::fabs(clip_coefficient(10.0, 1.0f) - 1.0 / (10.0 + 1e-6)) <= 1e-7);
  BOOST_TEST(clip_coefficient(0.5, 1.0f) == 1.0f);
  BOOST_TEST(clip_coefficient(10.0, 0.0f) == 1.0f);
}
