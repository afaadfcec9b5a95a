// bench_ring_reduce_scatter: our ring reduce-scatter (comm/ring_reduce_scatter.hpp) against
// Open MPI's non-blocking one (libnbc), fp32, interleaved A/B in every repetition so a loaded
// machine slows both alike; it sets kRingMinFullBytes. Both wait as MpiComm's progress thread
// does (polled, comm/request_wait.hpp). Per size and algorithm: the median over repetitions of
// the slowest rank's wall time, and each rank's median CPU time of the calling thread (how
// evenly the work is spread: libnbc's reduce-scatter sums everything on rank 0).
// Writes outputs/bench/ring_reduce_scatter.json (rank 0).
//   mpirun -np 4 --oversubscribe build/tests/comm/bench_ring_reduce_scatter [--reps 9] [--max-mib 32]
#include <mpi.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "comm/mpi_error.hpp"
#include "comm/request_wait.hpp"
#include "comm/ring_reduce_scatter.hpp"
#include "comm/shard_range.hpp"
#include "comm/world.hpp"

using namespace emb;
using Clock = std::chrono::steady_clock;

namespace {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Timings {
  std::vector<double> slowest_wall, cpu;  // per repetition
};

void time_once(MPI_Comm world, const std::function<void()>& body, Timings& t) {
  MPI_Barrier(world);
  const Clock::time_point t0 = Clock::now();
  const double cpu0 = thread_cpu_seconds();
  body();
  t.cpu.push_back(thread_cpu_seconds() - cpu0);
  double wall = std::chrono::duration<double>(Clock::now() - t0).count(), slowest = 0;
  MPI_Allreduce(&wall, &slowest, 1, MPI_DOUBLE, MPI_MAX, world);
  t.slowest_wall.push_back(slowest);
}

nlohmann::json summary(const World& w, const Timings& t) {
  const double cpu = median(t.cpu);
  std::vector<double> cpu_by_rank(size_t(w.size));
  MPI_Allgather(&cpu, 1, MPI_DOUBLE, cpu_by_rank.data(), 1, MPI_DOUBLE, w.comm);
  return {{"wall_s", median(t.slowest_wall)}, {"cpu_s_by_rank", cpu_by_rank}};
}

// Both reduce-scatters of one full buffer of n floats, `reps` interleaved repetitions.
nlohmann::json measure(const World& w, MPI_Comm comm, RingReduceScatter& ring, int64_t n, int reps) {
  std::vector<int> counts(size_t(w.size));
  for (int r = 0; r < w.size; ++r) counts[size_t(r)] = int(shard_range(n, r, w.size).count);
  std::vector<float> full(size_t(n), float(w.rank + 1)), shard(size_t(counts[size_t(w.rank)]));
  const auto wait = [](MPI_Request& req, const char* what) { wait_requests(&req, 1, CommProgress::thread, what); };
  Timings nbc, ring_timings;
  for (int rep = 0; rep < reps; ++rep) {
    time_once(w.comm, [&] {
      MPI_Request req;
      mpi_check(MPI_Ireduce_scatter(full.data(), shard.data(), counts.data(), MPI_FLOAT, MPI_SUM, comm, &req), "MPI_Ireduce_scatter");
      wait(req, "MPI_Ireduce_scatter");
    }, nbc);
    time_once(w.comm, [&] { ring.reduce_scatter_sum(full.data(), shard.data(), n, false); }, ring_timings);
  }
  return {{"full_bytes", n * int64_t(sizeof(float))}, {"libnbc", summary(w, nbc)}, {"ring", summary(w, ring_timings)}};
}

void print_row(const nlohmann::json& row, const char* algo) {
  const nlohmann::json& s = row[algo];
  std::printf("%10lld B  %-6s wall %9.3f ms  cpu/rank ms:", (long long)row["full_bytes"].get<int64_t>(), algo,
              1e3 * s["wall_s"].get<double>());
  for (double c : s["cpu_s_by_rank"]) std::printf(" %.3f", 1e3 * c);
  std::printf("\n");
}

int run(const World& w, int reps, int max_mib) {
  MPI_Comm comm;
  mpi_check(MPI_Comm_dup(w.comm, &comm), "MPI_Comm_dup");
  RingReduceScatter ring(comm, CommProgress::thread);
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t bytes = 64 << 10; bytes <= (int64_t(max_mib) << 20); bytes *= 2)
    rows.push_back(measure(w, comm, ring, bytes / int64_t(sizeof(float)), reps));
  MPI_Comm_free(&comm);
  if (w.rank != 0) return 0;
  for (const nlohmann::json& row : rows)
    for (const char* algo : {"libnbc", "ring"}) print_row(row, algo);
  const std::filesystem::path path = "outputs/bench/ring_reduce_scatter.json";
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << nlohmann::json{{"ranks", w.size}, {"reps", reps}, {"sizes", rows}}.dump(2) << "\n";
  std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Ring reduce-scatter against Open MPI's non-blocking one (run under mpirun)"};
  int reps = 9, max_mib = 32;
  app.add_option("--reps", reps, "interleaved repetitions per size (median reported)")->check(CLI::PositiveNumber);
  app.add_option("--max-mib", max_mib, "largest full buffer in MiB (sizes from 64 KiB, doubling)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  return run_in_world("bench_ring_reduce_scatter", &argc, &argv, [&](const World& w) { return run(w, reps, max_mib); });
}
