// The loader's host time per step as --plan times it (plan/loader_cost.hpp) on a synthetic
// packed file: a rank's share of the batch, a real time, none without data, and the process's
// cores given back.
#define BOOST_TEST_MODULE loader_cost
#include <boost/test/unit_test.hpp>

#include <sched.h>

#include <map>
#include <string>

#include "comm/world_fixture.hpp"
#include "data/data_fixtures.hpp"
#include "data/packed_dataset.hpp"
#include "plan/loader_cost.hpp"

using namespace emb;

namespace {

// A gr00t file of `episodes` episodes of 5-40 steps (about 22 samples each), written once.
std::string gr00t_file(int64_t episodes) {
  static std::map<int64_t, std::string> written;
  auto it = written.find(episodes);
  if (it == written.end())
    it = written.emplace(episodes, test::write_synth(test::tiny_synth("gr00t", episodes, 3),
                                                     test::scratch_dir("loader_cost") + "/gr00t_" +
                                                         std::to_string(episodes) + ".h5")).first;
  return it->second;
}

RunConfig tiny_gr00t_run(int64_t global_batch, int64_t episodes = 120) {
  RunConfig cfg;
  cfg.model = test::tiny_model(Family::gr00t);
  cfg.data.paths = {gr00t_file(episodes)};
  cfg.data.global_batch = global_batch;
  return cfg;
}

// time_loader of `cfg` with its files' samples counted as the plan counts them (run_plan's data shape).
LoaderTiming timed(const RunConfig& cfg, int ranks) {
  const PackedDataset data(MPI_COMM_SELF, cfg.data.mpio_transfer, cfg.data.paths, cfg.model, cfg.data.view);
  return time_loader(cfg, ranks, data.samples());
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

BOOST_AUTO_TEST_CASE(a_rank_times_its_share_of_the_batch) {
  const LoaderTiming one = timed(tiny_gr00t_run(32), 1);
  BOOST_TEST(one.samples == 32);
  BOOST_TEST(one.steps == 15);
  // Tens to hundreds of µs here (0.14 ms for tiny_gr00t's 32 samples); a second would be a
  // step of another order, not a loader's.
  BOOST_TEST(one.step_s > 1e-6);
  BOOST_TEST(one.step_s < 0.1);
  const LoaderTiming quarter = timed(tiny_gr00t_run(30), 4);
  BOOST_TEST(quarter.samples == 8);  // ceil(30 / 4): the rank with most
  BOOST_TEST(quarter.step_s > 0);
}

BOOST_AUTO_TEST_CASE(a_large_batch_is_timed_on_part_of_it_and_scaled) {
  const LoaderTiming t = timed(tiny_gr00t_run(200), 1);
  BOOST_TEST(t.samples == 200);
  BOOST_TEST(t.step_s > 0);
  BOOST_TEST(t.step_s < 0.5);
}

BOOST_AUTO_TEST_CASE(no_data_yet_times_nothing) {
  RunConfig cfg = tiny_gr00t_run(32);
  cfg.data.paths = {test::scratch_dir("loader_cost") + "/not_made_yet.h5"};
  const LoaderTiming t = time_loader(cfg, 2, 1 << 20);  // samples enough: only the missing file stops it
  BOOST_TEST(t.step_s == 0.0);
  BOOST_TEST(t.steps == 0);
}

BOOST_AUTO_TEST_CASE(too_few_samples_to_time_apart_from_the_reads_time_nothing) {
  // 10 episodes hold ~220 samples; 21 steps of 32 (warm-up, timed, the prefetch queue's) do not fit.
  const LoaderTiming t = timed(tiny_gr00t_run(32, 10), 1);
  BOOST_TEST(t.step_s == 0.0);
  BOOST_TEST(timed(tiny_gr00t_run(8, 10), 1).step_s > 0);
}

BOOST_AUTO_TEST_CASE(the_cores_are_given_back) {
  cpu_set_t before, after;
  BOOST_REQUIRE(sched_getaffinity(0, sizeof(before), &before) == 0);
  timed(tiny_gr00t_run(16), 1);
  BOOST_REQUIRE(sched_getaffinity(0, sizeof(after), &after) == 0);
  BOOST_TEST(CPU_EQUAL(&before, &after));
}
