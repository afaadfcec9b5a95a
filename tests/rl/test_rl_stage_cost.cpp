// The stage-cost model and its pacer: a chunk's modelled time has the log-normal step
// distribution and the straggler rate it was configured with, is a pure function of
// (seed, env, chunk), and the generator and trainer times are their affine formulas; the pacer
// makes a stage last its modelled time (when on only) and counts the stages the model could
// not hide. Timing checks bound from below tightly and from above loosely (a shared machine).
#define BOOST_TEST_MODULE rl_stage_cost
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "rl/stage_cost.hpp"
#include "rl/stage_pacer.hpp"
#include "rl/utilisation.hpp"

using namespace emb;

namespace {

StageCostConfig config(double sigma, double straggler_prob) {
  StageCostConfig c;
  c.on = true;
  c.sim_step_ms = 2, c.sim_step_sigma = sigma, c.straggler_prob = straggler_prob, c.straggler_factor = 8;
  c.gen_ms_fixed = 4, c.gen_ms_per_sample = 0.1, c.train_ms_per_chunk = 0.5;
  return c;
}

double median(std::vector<double> x) {
  std::nth_element(x.begin(), x.begin() + ptrdiff_t(x.size() / 2), x.end());
  return x[x.size() / 2];
}

constexpr int kDraws = 20000;

}  // namespace

BOOST_AUTO_TEST_CASE(one_step_is_log_normal_with_the_configured_median_and_spread) {
  StageCostModel model(config(0.25, 0), 7);
  std::vector<double> t;
  double sum_log = 0, sum_log2 = 0;
  for (int e = 0; e < kDraws; ++e) {
    t.push_back(model.sim_chunk_seconds(uint64_t(e % 16), e / 16, 1));
    sum_log += std::log(t.back()), sum_log2 += std::log(t.back()) * std::log(t.back());
  }
  const double mean_log = sum_log / kDraws, sigma = std::sqrt(sum_log2 / kDraws - mean_log * mean_log);
  BOOST_TEST(median(t) == 2e-3, boost::test_tools::tolerance(0.03));
  BOOST_TEST(std::exp(mean_log) == 2e-3, boost::test_tools::tolerance(0.03));
  BOOST_TEST(sigma == 0.25, boost::test_tools::tolerance(0.03));
}

BOOST_AUTO_TEST_CASE(a_chunk_sums_its_steps) {
  // Σ of 8 log-normal steps: mean 8·m·exp(σ²/2) exactly; median by Fenton-Wilkinson
  // (a log-normal of the same mean and variance): mean / sqrt(1 + (exp(σ²) − 1)/8).
  const double sigma = 0.25, steps = 8;
  StageCostModel model(config(sigma, 0), 7);
  std::vector<double> t;
  double sum = 0;
  for (int e = 0; e < kDraws; ++e) t.push_back(model.sim_chunk_seconds(3, e, int(steps))), sum += t.back();
  const double mean = steps * 2e-3 * std::exp(sigma * sigma / 2);
  BOOST_TEST(sum / kDraws == mean, boost::test_tools::tolerance(0.01));
  BOOST_TEST(median(t) == mean / std::sqrt(1 + std::expm1(sigma * sigma) / steps), boost::test_tools::tolerance(0.03));
}

BOOST_AUTO_TEST_CASE(chunks_straggle_at_the_configured_rate_by_the_configured_factor) {
  StageCostModel model(config(0, 0.1), 11);  // σ = 0: a chunk is exactly 4·m or 4·m·8
  int straggled = 0, other = 0;
  for (int e = 0; e < kDraws; ++e) {
    const double t = model.sim_chunk_seconds(uint64_t(e), 0, 4);
    if (std::abs(t - 64e-3) < 1e-12) straggled += 1;
    else if (std::abs(t - 8e-3) >= 1e-12) other += 1;
  }
  BOOST_TEST(other == 0);
  const double sd = std::sqrt(0.1 * 0.9 / kDraws);  // binomial; 4 sd either side
  BOOST_TEST(double(straggled) / kDraws >= 0.1 - 4 * sd);
  BOOST_TEST(double(straggled) / kDraws <= 0.1 + 4 * sd);
}

BOOST_AUTO_TEST_CASE(draws_are_pure_functions_of_seed_env_and_chunk) {
  StageCostModel a(config(0.25, 0.02), 5), b(config(0.25, 0.02), 5), other_seed(config(0.25, 0.02), 6);
  std::vector<double> forward;
  for (int c = 0; c < 100; ++c) forward.push_back(a.sim_chunk_seconds(9, c, 8));
  int differ = 0, same = 0;
  for (int c = 99; c >= 0; --c) differ += b.sim_chunk_seconds(9, c, 8) != forward[size_t(c)];  // in any order
  for (int c = 0; c < 100; ++c) {
    const double t = forward[size_t(c)];
    same += other_seed.sim_chunk_seconds(9, c, 8) == t || a.sim_chunk_seconds(10, c, 8) == t ||
            (c > 0 && t == forward[size_t(c) - 1]);
  }
  BOOST_TEST(differ == 0);
  BOOST_TEST(same == 0);
}

BOOST_AUTO_TEST_CASE(generator_and_trainer_times_are_affine) {
  StageCostModel model(config(0.25, 0.02), 1);
  BOOST_TEST(model.gen_batch_seconds(0) == 4e-3, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(model.gen_batch_seconds(32) == 7.2e-3, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(model.train_seconds(256) == 0.128, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(out_of_range_values_name_their_key) {
  StageCostConfig c = config(0.25, 0.02);
  c.sim_step_ms = -1;
  BOOST_CHECK_EXCEPTION(StageCostModel(c, 0), Error,
                        [](const Error& e) { return std::string(e.what()).find("rl.sim_step_ms = -1") == 0; });
  c = config(0.25, 1.5);
  BOOST_CHECK_EXCEPTION(StageCostModel(c, 0), Error,
                        [](const Error& e) { return std::string(e.what()).find("rl.straggler_prob") == 0; });
  c = config(0.25, 0.02), c.straggler_factor = 0.5;
  BOOST_CHECK_THROW(StageCostModel(c, 0), Error);
}

BOOST_AUTO_TEST_CASE(pacer_makes_a_stage_last_its_modelled_time) {
  StagePacer pacer(true);
  for (int i = 0; i < 3; ++i) {
    pacer.begin();
    const double wall = pacer.finish(0.02);
    BOOST_TEST(wall >= 0.02);
    BOOST_TEST(wall < 0.02 + 0.05);
  }
  BOOST_TEST(pacer.stages() == 3);
  BOOST_TEST(pacer.modelled_s() == 0.06, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(pacer.slept_s() >= 0.06 - pacer.real_s());
  BOOST_TEST(pacer.overruns() == 0);
}

BOOST_AUTO_TEST_CASE(pacer_counts_compute_the_model_cannot_hide) {
  StagePacer pacer(true);
  pacer.begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(15));  // the "compute"
  const double wall = pacer.finish(0.005);
  BOOST_TEST(wall >= 0.015);
  BOOST_TEST(pacer.overruns() == 1);
  BOOST_TEST(pacer.overrun_s() >= 0.01);
  BOOST_TEST(pacer.slept_s() == 0);
}

BOOST_AUTO_TEST_CASE(pacer_off_never_sleeps) {
  StagePacer pacer(false);
  pacer.begin();
  const double wall = pacer.finish(0.5);
  BOOST_TEST(wall < 0.1);
  BOOST_TEST(pacer.slept_s() == 0);
  BOOST_TEST(pacer.overruns() == 0);
  BOOST_TEST(pacer.modelled_s() == 0.5);
  BOOST_TEST(pacer.real_s() == wall);
  BOOST_CHECK_THROW(pacer.finish(0.5), Error);  // each finish needs its begin
}

BOOST_AUTO_TEST_CASE(utilisation_is_the_busy_fraction) {
  Utilisation u;
  BOOST_TEST(u.busy_fraction() == 0);
  u.busy_s += 3, u.wait_s += 1;
  BOOST_TEST(u.busy_fraction() == 0.75);
}
