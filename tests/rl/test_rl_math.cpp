// The RL math of src/rl against hand-computed cases: the Flow-SDE transition (coefficients,
// log-probability, the target velocity and curvature that turn its gradient into a weighted
// regression), the decoupled PPO loss of stale samples, GAE and GRPO's group advantages.
#define BOOST_TEST_MODULE rl_math
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "rl/flow_sde.hpp"
#include "rl/grpo.hpp"
#include "rl/ppo.hpp"

using namespace emb;

BOOST_AUTO_TEST_CASE(flow_sde_coefficients_by_hand) {
  // K = 4, a = 0.5. k = 0: σ = 0.5·sqrt(1/δ) = 1, c_data = 0.25, c_noise = 0.75 − 1·0.25/2.
  FlowTransition t0 = flow_sde_transition(0, 4, 0.5);
  BOOST_TEST(t0.alpha == 0.875, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(t0.beta == 0.25, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(t0.std == 0.5, boost::test_tools::tolerance(1e-12));
  // k = 1: t = 0.25, σ = 0.5·sqrt(3), c_data = 0.5, c_noise = 0.5 − 0.75·0.25/1.5 = 0.375.
  FlowTransition t1 = flow_sde_transition(1, 4, 0.5);
  BOOST_TEST(t1.alpha == 0.875, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(t1.beta == 0.28125, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(t1.std == 0.25 * std::sqrt(3.0), boost::test_tools::tolerance(1e-12));
  // a = 0 is the Euler (ODE) step x + δ·v at every k.
  for (int k = 0; k < 4; ++k) {
    FlowTransition ode = flow_sde_transition(k, 4, 0.0);
    BOOST_TEST(ode.alpha == 1.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(ode.beta == 0.25, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(ode.std == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(transition_log_prob_target_and_curvature) {
  const FlowTransition tr = flow_sde_transition(1, 4, 0.5);
  const std::vector<float> x{0.3f, -1.2f, 0.7f}, v{0.5f, 0.1f, -2.0f}, x_next{0.4f, -0.9f, 0.2f};
  const std::vector<float> mask{1.f, 1.f, 0.f};  // the third element is not executed
  double expect = 0;
  for (int e = 0; e < 2; ++e) {
    const double mu = tr.alpha * x[e] + tr.beta * v[e];
    expect += -std::log(tr.std) - 0.5 * std::log(2 * M_PI) - (x_next[e] - mu) * (x_next[e] - mu) / (2 * tr.std * tr.std);
  }
  const double logp = transition_log_prob(tr, x.data(), v.data(), x_next.data(), mask.data(), 3);
  BOOST_TEST(logp == expect, boost::test_tools::tolerance(1e-12));
  // At v* the mean is x_next: the log-probability is the maximum, −log std − ½ log 2π per element.
  std::vector<float> vt(3);
  transition_target_velocity(tr, x.data(), x_next.data(), vt.data(), 3);
  const double at_target = transition_log_prob(tr, x.data(), vt.data(), x_next.data(), mask.data(), 3);
  BOOST_TEST(at_target == 2 * (-std::log(tr.std) - 0.5 * std::log(2 * M_PI)), boost::test_tools::tolerance(1e-6));
  // d log p / d v_e = −curvature·(v_e − v*_e), against a central difference.
  const double h = 1e-3;
  std::vector<float> vp = v, vm = v;
  vp[0] += float(h), vm[0] -= float(h);
  const double fd = (transition_log_prob(tr, x.data(), vp.data(), x_next.data(), mask.data(), 3) -
                     transition_log_prob(tr, x.data(), vm.data(), x_next.data(), mask.data(), 3)) /
                    (double(vp[0]) - double(vm[0]));
  BOOST_TEST(fd == -log_prob_curvature(tr) * (v[0] - vt[0]), boost::test_tools::tolerance(1e-3));
}

BOOST_AUTO_TEST_CASE(chain_log_prob_sums_its_steps) {
  // Steps 2 and 3 of K = 4 (rl.sde_steps = all from k_first 2): x₂ → x₃ → x₄, two elements each.
  const std::vector<float> chain{0.1f, -0.4f, 0.3f, 0.2f, 0.9f, -0.1f}, v{0.6f, 1.1f, 0.8f, -0.7f};
  const std::vector<float> mask{1.f, 1.f};
  double expect = 0;
  for (int j = 0; j < 2; ++j) {
    const FlowTransition tr = flow_sde_transition(2 + j, 4, 0.7);
    for (int e = 0; e < 2; ++e) {
      const double mu = tr.alpha * chain[size_t(2 * j + e)] + tr.beta * v[size_t(2 * j + e)];
      const double z = (chain[size_t(2 * (j + 1) + e)] - mu) / tr.std;
      expect += -std::log(tr.std) - 0.5 * std::log(2 * M_PI) - 0.5 * z * z;
    }
  }
  BOOST_TEST(chain_log_prob(2, 2, 4, 0.7, chain.data(), v.data(), mask.data(), 2) == expect,
             boost::test_tools::tolerance(1e-12));
  // One step is transition_log_prob itself.
  BOOST_TEST(chain_log_prob(3, 1, 4, 0.7, chain.data() + 2, v.data() + 2, mask.data(), 2) ==
                 transition_log_prob(flow_sde_transition(3, 4, 0.7), chain.data() + 2, v.data() + 2, chain.data() + 4,
                                     mask.data(), 2),
             boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(decoupled_ppo_by_hand) {
  const PpoConfig cfg{0.2, 3.0, 2.0};
  // Stale but accepted: w = e^0.4, r = e^0.1 inside the clip range: the unclipped term.
  PpoSampleTerms a = ppo_sample_terms(cfg, -1.0, -1.1, -1.5, 2.0);
  BOOST_TEST(!a.filtered);
  BOOST_TEST(a.w == std::exp(0.4), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(a.ratio == std::exp(0.1), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(a.loss == -std::exp(0.4) * std::exp(0.1) * 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(a.dloss_dlogp == a.loss, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(!a.clipped);
  // r = e^0.5 > 1.2 with A > 0: the clipped term, no gradient; loss −1.2·A.
  PpoSampleTerms b = ppo_sample_terms(cfg, -0.5, -1.0, -1.0, 1.0);
  BOOST_TEST(b.loss == -1.2, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(b.dloss_dlogp == 0.0);
  BOOST_TEST(b.clipped);
  // A < 0 and r = e^1.5: min(rA, clip(r)A) = −4.48 is below c·A = −3: the dual clip bounds it.
  PpoSampleTerms c = ppo_sample_terms(cfg, 0.5, -1.0, -1.0, -1.0);
  BOOST_TEST(c.loss == 3.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(c.dloss_dlogp == 0.0);
  BOOST_TEST(c.clipped);
  // A < 0 and r = e^0.3 > 1 + ε: PPO is pessimistic, the unclipped r·A stays active.
  PpoSampleTerms d = ppo_sample_terms(cfg, -0.7, -1.0, -1.0, -1.0);
  BOOST_TEST(d.loss == std::exp(0.3), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(d.dloss_dlogp == std::exp(0.3), boost::test_tools::tolerance(1e-12));
  // w = e^1 > 2: filtered out.
  PpoSampleTerms e = ppo_sample_terms(cfg, -1.0, -1.0, -2.0, 1.0);
  BOOST_TEST(e.filtered);
  BOOST_TEST(e.dloss_dlogp == 0.0);
}

BOOST_AUTO_TEST_CASE(gae_by_hand) {
  std::vector<float> adv, ret;
  // The segment ends the episode: the bootstrap value is ignored.
  gae({1.f, 0.f, 2.f}, {0, 0, 1}, {0.5f, 0.4f, 0.3f}, 9.f, 0.9, 0.8, adv, ret);
  BOOST_TEST(adv[2] == 1.7f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(adv[1] == 1.094f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(adv[0] == 1.64768f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(ret[0] == 2.14768f, boost::test_tools::tolerance(1e-6f));
  // A cut segment bootstraps from the value of the state after it.
  gae({1.f, 0.f, 2.f}, {0, 0, 0}, {0.5f, 0.4f, 0.3f}, 1.f, 0.9, 0.8, adv, ret);
  BOOST_TEST(adv[2] == 2.6f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(adv[1] == 1.742f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(adv[0] == 2.11424f, boost::test_tools::tolerance(1e-6f));
  std::vector<float> a{1.f, 2.f, 3.f, 6.f};
  normalise_advantages(a);
  BOOST_TEST(a[0] + a[1] + a[2] + a[3] == 0.f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(a[3] == 3.f / std::sqrt(3.5f), boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(group_advantages_by_hand) {
  // Returns 0.3, 0.3, 1.2: mean 0.6, std sqrt((0.09 + 0.09 + 0.36)/3) = sqrt(0.18).
  const std::vector<float> a = group_advantages({0.3, 0.3, 1.2});
  BOOST_TEST(a[0] == -0.3 / std::sqrt(0.18), boost::test_tools::tolerance(1e-6));
  BOOST_TEST(a[1] == a[0]);
  BOOST_TEST(a[2] == 0.6 / std::sqrt(0.18), boost::test_tools::tolerance(1e-6));
  // Sparse returns, 1 success in 4: mean 0.25, std sqrt(3)/4.
  const std::vector<float> b = group_advantages({0, 1, 0, 0});
  BOOST_TEST(b[1] == 3.0 / std::sqrt(3.0), boost::test_tools::tolerance(1e-6));
  BOOST_TEST(b[0] == -1.0 / std::sqrt(3.0), boost::test_tools::tolerance(1e-6));
  // A uniform group carries no signal.
  for (float x : group_advantages({1, 1, 1})) BOOST_TEST(x == 0.f);
  BOOST_TEST((advantage_from_name("grpo") == Advantage::grpo));
  BOOST_CHECK_THROW(advantage_from_name("ppo"), std::exception);
}
