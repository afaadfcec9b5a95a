#include "fixed_costs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace emb::probe {
namespace {

using Clock = std::chrono::steady_clock;

// The median over 5 runs of fn's seconds, after one warm-up run.
template <class Fn>
double median_seconds(Fn&& fn) {
  fn();
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = Clock::now();
    fn();
    runs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

// Backend memory for a few floats, freed with the Ops that made it.
struct Scratch {
  Ops& ops;
  float* data;
  explicit Scratch(Ops& o, size_t floats) : ops(o), data(static_cast<float*>(o.allocate(floats * sizeof(float)))) {
    ops.zero(view(data, 1, int64_t(floats)));
  }
  ~Scratch() { ops.deallocate(data); }
};

}  // namespace

double op_call_seconds(Ops& ops) {
  constexpr int kCalls = 20000;
  const Scratch s(ops, 24);
  const View a = view(s.data, 1, 8), b = view(s.data + 8, 1, 8), y = view(s.data + 16, 1, 8);
  const double seconds = median_seconds([&] {
    for (int i = 0; i < kCalls; ++i) ops.add(a, b, y);
    ops.synchronize();
  });
  return seconds / kCalls;
}

double allocation_seconds() {
  // Sizes in bytes in the mix a micro-batch's host code allocates them (tests/plan/test_op_calls
  // counted: ~40 % of 33-64 B, ~38 % of 0.5-1 KiB, ~17 % of 17-32 B, the rest up to 16 KiB).
  static constexpr size_t kSizes[] = {32, 64, 64, 64, 1024, 1024, 1024, 256};
  constexpr int kRounds = 2000;
  const size_t per_round = sizeof kSizes / sizeof kSizes[0];
  const double seconds = median_seconds([&] {
    for (int r = 0; r < kRounds; ++r) {
      std::unique_ptr<char[]> held[per_round];
      for (size_t i = 0; i < per_round; ++i) {
        held[i].reset(new char[kSizes[i]]);
        std::memset(held[i].get(), r & 0xff, kSizes[i]);
      }
    }
  });
  return seconds / double(kRounds * per_round);
}

double noise_draw_seconds() {
  constexpr int kRuns = 4000, kPerRun = 64;
  std::vector<float> out(kPerRun);
  double kept = 0;  // read back, so that no draw is optimised away
  const double seconds = median_seconds([&] {
    for (int r = 0; r < kRuns; ++r) {
      CounterRng(1, RngStream::flow_noise, 0, uint64_t(r)).normals(0, kPerRun, out.data());
      kept += out[size_t(r % kPerRun)];
    }
  });
  EMB_CHECK(std::isfinite(kept), "hwprobe: a noise draw was not finite");
  return seconds / double(kRuns * kPerRun);
}

LaunchCosts launch_costs(Ops& ops) {
  constexpr int kLaunches = 256;
  const Scratch s(ops, 8);
  const View x = view(s.data, 1, 8);
  LaunchCosts c;
  c.kernel_launch_s = median_seconds([&] {
                        for (int i = 0; i < kLaunches; ++i) ops.zero(x);
                        ops.synchronize();
                      }) /
                      kLaunches;
  const std::vector<int64_t> key{kLaunches};
  c.graph_kernel_launch_s = median_seconds([&] {
                              ops.begin_graph();
                              for (int i = 0; i < kLaunches; ++i) ops.zero(x);
                              ops.end_graph(key);
                              ops.synchronize();
                            }) /
                            kLaunches;
  return c;
}

}  // namespace emb::probe
