// timings.csv and summary.json gathered from every rank: known per-rank phase times in, exact
// rows and statistics out.
#define BOOST_TEST_MODULE train_run_report
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "comm/agreement.hpp"
#include "comm/world_fixture.hpp"
#include "train/run_dir.hpp"
#include "train/run_report.hpp"

using namespace emb;
namespace tt = boost::test_tools;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

BOOST_AUTO_TEST_CASE(report_gathers_every_rank_and_step) {
  const World& world = test_world();
  const int steps = 5;
  PhaseTimers timers;
  for (int s = 1; s <= steps; ++s) {
    // fwd = rank + step/10; step time 1 + rank; comm exposed half of total.
    timers.add(Phase::fwd, world.rank + s / 10.0);
    timers.add(Phase::step, 1.0 + world.rank);
    timers.add(Phase::comm_total, 0.2);
    timers.add(Phase::comm_exposed, 0.1);
    timers.end_step(s);
  }
  std::string dir;
  if (world.rank == 0) {
    auto base = std::filesystem::temp_directory_path() / "embtrain_test_report";
    std::filesystem::remove_all(base);
    dir = create_fresh_dir(base.string());
  }
  broadcast_string(world.comm, dir);

  RunTotals totals;
  totals.steps = steps;
  totals.samples = 80;
  totals.tokens = 4000;
  write_run_report(world.comm, dir, timers, totals);
  if (world.rank != 0) return;

  std::ifstream csv(dir + "/timings.csv");
  std::string line;
  std::getline(csv, line);
  BOOST_TEST(line == "rank,step,phase,seconds");
  int rows = 0;
  bool saw_last_rank_fwd = false;
  while (std::getline(csv, line)) {
    ++rows;
    if (line == std::to_string(world.size - 1) + ",5,fwd," + std::to_string(world.size - 1) + ".5") saw_last_rank_fwd = true;
  }
  BOOST_TEST(rows == world.size * steps * kNumPhases);
  BOOST_TEST(saw_last_rank_fwd);

  nlohmann::json s = nlohmann::json::parse(std::ifstream(dir + "/summary.json"));
  BOOST_TEST(s["ranks"].get<int>() == world.size);
  BOOST_TEST(s["phases"]["fwd"]["per_step"]["min"].get<double>() == 0.1, tt::tolerance(1e-12));
  BOOST_TEST(s["phases"]["fwd"]["per_step"]["max"].get<double>() == world.size - 1 + 0.5, tt::tolerance(1e-12));
  BOOST_TEST(s["phases"]["fwd"]["rank_total"]["min"].get<double>() == 1.5, tt::tolerance(1e-12));
  // The slowest rank bounds throughput: its 5 steps take 5·world.size seconds.
  BOOST_TEST(s["step_seconds_total"].get<double>() == 5.0 * world.size, tt::tolerance(1e-12));
  BOOST_TEST(s["samples_per_s"].get<double>() == 80.0 / (5.0 * world.size), tt::tolerance(1e-12));
  BOOST_TEST(s["comm_exposed_fraction"].get<double>() == 0.5, tt::tolerance(1e-12));
  BOOST_TEST(s["peak_memory_bytes"]["max"].get<double>() > 0);
  std::filesystem::remove_all(dir);
}
