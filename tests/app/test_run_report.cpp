// timings.csv and summary.json built from every rank's streamed timings: known per-rank phase
// times in, exact rows and statistics out; each rank's file holds its steps before the report
// (what a killed job keeps), and its trace is valid trace-event JSON.
#define BOOST_TEST_MODULE train_run_report
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "comm/agreement.hpp"
#include "comm/world_fixture.hpp"
#include "app/run_dir.hpp"
#include "app/run_report.hpp"

using namespace emb;
namespace tt = boost::test_tools;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

BOOST_AUTO_TEST_CASE(report_gathers_every_rank_and_step) {
  const World& world = test_world();
  const int steps = 5;
  std::string dir;
  if (world.rank == 0) {
    auto base = std::filesystem::temp_directory_path() / "embtrain_test_report";
    std::filesystem::remove_all(base);
    dir = create_fresh_dir(base.string());
  }
  broadcast_string(world.comm, dir);
  PhaseTimers timers;
  auto trace = std::make_unique<RunTrace>(dir, world.rank);
  timers.set_trace(trace.get());
  for (int s = 1; s <= steps; ++s) {
    // fwd = rank + step/10; step time 1 + rank; comm exposed half of total.
    timers.add(Phase::fwd, world.rank + s / 10.0);
    timers.add(Phase::step, 1.0 + world.rank);
    timers.add(Phase::comm_total, 0.2);
    timers.add(Phase::comm_exposed, 0.1);
    {
      ScopedPhase optim(timers, Phase::optim);
    }
    timers.end_step(s);
  }
  {  // streamed: every step is in the rank's file already (header + a row per phase per step)
    std::ifstream rank_csv(dir + "/timings/rank" + std::to_string(world.rank) + ".csv");
    int lines = 0;
    for (std::string l; std::getline(rank_csv, l);) ++lines;
    BOOST_TEST(lines == 1 + steps * kNumPhases);
  }
  trace.reset();  // closes the trace's array
  const nlohmann::json events =
      nlohmann::json::parse(std::ifstream(dir + "/trace/rank" + std::to_string(world.rank) + ".json"));
  int optim_events = 0;
  for (const nlohmann::json& e : events)
    if (e["ph"] == "X" && e["name"] == "optim" && e["pid"] == world.rank) ++optim_events;
  BOOST_TEST(optim_events == steps);

  RunTotals totals;
  totals.steps = steps;
  totals.samples = 80;
  totals.tokens = 4000;
  totals.flops_per_sample = 1e9;
  totals.peak_flops_per_rank = 1e12;
  write_run_report(world.comm, dir, totals);
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
  BOOST_TEST(s["mfu"].get<double>() == 80e9 / (5.0 * world.size) / world.size / 1e12, tt::tolerance(1e-12));
  BOOST_TEST(s["peak_memory_bytes"]["max"].get<double>() > 0);
  std::filesystem::remove_all(dir);
}
