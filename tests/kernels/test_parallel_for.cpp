// kernels/cpu/parallel_for.hpp: every index once; no OpenMP region (omp_get_level() stays 0) when
// one thread would run the loop, a region of the team otherwise; and the column sums, whose
// workers once wrote through their own empty thread_local buffer, right at several threads.
#include <boost/test/unit_test.hpp>

#include <omp.h>

#include <atomic>
#include <cmath>
#include <vector>

#include "kernel_check.hpp"
#include "kernels/cpu/column_sum.hpp"
#include "kernels/cpu/parallel_for.hpp"

using namespace emb;
using namespace emb::cpu;

namespace {

// omp_set_num_threads(threads) while it lives (ctest runs the kernels with OMP_NUM_THREADS=1).
class Threads {
 public:
  explicit Threads(int threads) : keep_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~Threads() { omp_set_num_threads(keep_); }

 private:
  int keep_;
};

// What a loop saw: how often each index ran, and the deepest nesting level and widest team any
// index ran in.
struct Seen {
  explicit Seen(int64_t n) : runs(size_t(n)) {}
  std::vector<std::atomic<int>> runs;
  std::atomic<int> level{0}, team{0};
  void record(int64_t i) {
    ++runs[size_t(i)];
    level = std::max(level.load(), omp_get_level());
    team = std::max(team.load(), omp_get_num_threads());
  }
  bool each_once() const {
    for (const auto& r : runs)
      if (r != 1) return false;
    return true;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(parallel_for_opens_a_region_only_for_more_than_one_thread) {
  constexpr int64_t n = 1000;
  for (int threads : {1, 3})
    for (bool worth : {false, true}) {
      const Threads scope(threads);
      const bool region = threads > 1 && worth;
      BOOST_TEST(max_team(worth) == (worth ? threads : 1));
      Seen plain(n), dynamic(n);
      parallel_for(n, worth, [&](int64_t i) { plain.record(i); });
      parallel_for<Schedule::dynamic>(n, worth, [&](int64_t i) { dynamic.record(i); });
      for (const Seen* s : {&plain, &dynamic}) {
        BOOST_TEST(s->each_once(), "threads " << threads << " worth " << worth);
        BOOST_TEST(s->level == (region ? 1 : 0), "threads " << threads << " worth " << worth);
        BOOST_TEST(s->team == (region ? threads : 1), "threads " << threads << " worth " << worth);
      }
    }
}

BOOST_AUTO_TEST_CASE(parallel_for_scratch_makes_one_scratch_per_thread_that_runs) {
  constexpr int64_t n = 600;
  for (int threads : {1, 3}) {
    const Threads scope(threads);
    std::atomic<int> made{0};
    Seen seen(n);
    parallel_for_scratch<Schedule::dynamic>(
        n, true,
        [&] {
          ++made;
          return std::vector<int64_t>();
        },
        [&](std::vector<int64_t>& mine, int64_t i) {
          mine.push_back(i);
          seen.record(i);
        });
    BOOST_TEST(seen.each_once());
    BOOST_TEST(made == threads);
    BOOST_TEST(seen.level == (threads > 1 ? 1 : 0));
  }
}

BOOST_AUTO_TEST_CASE(for_each_thread_runs_each_band_once) {
  for (int team : {1, 3}) {
    const Threads scope(3);
    std::vector<std::atomic<int>> bands(static_cast<size_t>(team));
    std::atomic<int> level{0}, other_team{0};
    const int ran = for_each_thread(team, [&](int t, int threads) {
      other_team += threads != team;
      ++bands[size_t(t)];
      level = std::max(level.load(), omp_get_level());
    });
    BOOST_TEST(ran == team);
    BOOST_TEST(other_team == 0);
    for (const auto& b : bands) BOOST_TEST(b == 1);
    BOOST_TEST(level == (team > 1 ? 1 : 0));
  }
}

BOOST_AUTO_TEST_CASE(column_sums_over_thread_bands_match_the_double_sum) {
  const int64_t N = 1024;
  const int C = 48;  // N·C = 49152 ≥ 2^15: the bands are split over the threads
  const auto x = test::random_floats(size_t(N * C), 7);
  std::vector<double> want(size_t(C), 0.5);
  for (int64_t i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c) want[size_t(c)] += x[size_t(i * C + c)];
  for (int threads : {1, 2, 3}) {
    const Threads scope(threads);
    std::vector<float> out(size_t(C), 0.5f);
    accumulate_column_sums(N, C, out.data(), [&](int64_t i, int c) { return x[size_t(i * C + c)]; });
    for (int c = 0; c < C; ++c)
      BOOST_TEST(std::abs(out[size_t(c)] - want[size_t(c)]) <= 1e-5 * (1.0 + std::abs(want[size_t(c)])),
                 "threads " << threads << " column " << c << ": " << out[size_t(c)] << " against " << want[size_t(c)]);
  }
}
