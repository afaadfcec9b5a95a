// `embsim profile`, the measurement behind the stage-cost model's simulator times: the summary
// statistics on samples whose answers are known, and a short profile of reach on 1-2 ranks
// (rank 0 measures; every timing is counted once per step, chunk or episode).
#define BOOST_TEST_MODULE rl_step_profile
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "comm/world_fixture.hpp"
#include "core/error.hpp"
#include "sim/expert.hpp"
#include "step_profile.hpp"

using namespace emb;

namespace {
BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);
}

BOOST_AUTO_TEST_CASE(summary_of_known_samples) {
  std::vector<double> ramp;  // 1, 2, ..., 100 ms, shuffled by reversal
  for (int i = 100; i >= 1; --i) ramp.push_back(i * 1e-3);
  const TimingSummary s = summarize_timings(ramp);
  BOOST_TEST(s.count == 100);
  BOOST_TEST(s.mean_ms == 50.5, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(s.p50_ms == 50.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(s.p90_ms == 90.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(s.p99_ms == 99.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(s.max_ms == 100.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(s.lognormal_sigma == std::log(75.0 / 25.0) / 1.349, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(s.straggler_fraction == 0);  // nothing above 150 ms
  BOOST_TEST(s.straggler_factor == 0);

  // 97 steps of 2 ms and three slow ones: 6 ms is not above 3× the median, 10 and 14 ms are.
  std::vector<double> body(97, 2e-3);
  for (double t : {6e-3, 10e-3, 14e-3}) body.push_back(t);
  const TimingSummary b = summarize_timings(body);
  BOOST_TEST(b.p50_ms == 2.0, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(b.lognormal_sigma == 0);
  BOOST_TEST(b.straggler_fraction == 0.02, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(b.straggler_factor == 6.0, boost::test_tools::tolerance(1e-9));
  BOOST_CHECK_THROW(summarize_timings({}), Error);
}

BOOST_AUTO_TEST_CASE(profile_of_reach_counts_every_step_once) {
  StepProfileOptions o;
  o.task = "reach", o.mjcf_dir = default_mjcf_dir(), o.episodes = 3, o.seed = 4, o.chunk_steps = 2;
  o.observation.views = {"top"};
  const StepProfile p = profile_steps(MPI_COMM_WORLD, o);
  if (test_world().rank != 0) {
    BOOST_TEST(p.steps == 0);  // rank 0 measures alone
    return;
  }
  // The same episodes' lengths, replayed without timing.
  const TaskSpec& t = task_spec("reach");
  Env env(t, load_task_model(t, o.mjcf_dir));
  Expert expert;
  std::vector<float> action(size_t(t.action_dim));
  int64_t steps = 0, chunks = 0;
  for (int64_t e = 0; e < o.episodes; ++e) {
    env.reset(o.seed, EpisodeSplit::collect, e);
    expert.reset();
    while (!env.done()) expert.act(env, action.data()), env.step(action.data());
    steps += env.steps(), chunks += env.steps() / o.chunk_steps;
  }
  BOOST_TEST(p.task == "reach");
  BOOST_TEST(p.steps == steps);
  BOOST_TEST(p.physics.count == steps);
  BOOST_TEST(p.render.count == steps);
  BOOST_TEST(p.step.count == steps);
  BOOST_TEST(p.chunk.count == chunks);
  BOOST_TEST(p.reset.count == 3);
  BOOST_TEST(p.features.count == steps);
  BOOST_TEST(p.step.mean_ms == p.physics.mean_ms + p.render.mean_ms + p.features.mean_ms,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(p.physics.p50_ms > 0);
  BOOST_TEST(p.render.p50_ms > 0);
  BOOST_TEST(p.physics.p50_ms <= p.physics.p90_ms);
  BOOST_TEST(p.physics.p90_ms <= p.physics.max_ms);
  BOOST_TEST(profile_json(p)["chunk"]["count"] == chunks);
}

BOOST_AUTO_TEST_CASE(bad_options_fail_on_every_rank) {
  StepProfileOptions o;
  o.task = "reach", o.mjcf_dir = default_mjcf_dir(), o.episodes = 0;
  BOOST_CHECK_THROW(profile_steps(MPI_COMM_WORLD, o), Error);
  o.episodes = 1, o.task = "fly";
  BOOST_CHECK_THROW(profile_steps(MPI_COMM_WORLD, o), Error);
}
