// Measures this machine for the planner (src/plan/hardware.hpp), every rank at once as
// training runs them, and prints a hardware file whose every figure names this command:
//   mpirun -np CORES hwprobe [NAME] > inputs/hw/NAME.json
//   mpirun -np RANKS hwprobe --imbalance [FILE]   only rank_imbalance, at RANKS (e.g. two per
//                                           core), and with ranks sharing cores time_sharing_link:
//                                           the collectives below and their core seconds per
//                                           byte and per call at that count; given FILE (a
//                                           hardware file), that file with them in place, for
//                                           --plan at RANKS
//   hwprobe --launch GPU.json > NEW.json    on a GPU: the file with fixed_costs' kernel launch
//                                           figures (with and without CUDA graphs) measured (the
//                                           CUDA emulation prints them on stderr, not as a file)
//   gemm        linear forward + backward (the project's kernel) at the trunk shapes of a
//               D 256, F 1024 model on 2048 rows, every rank at once; peak: 1024³ forward;
//               by width: the same at D 32, 64, 128 over D 256, on 512 rows, interleaved;
//               narrow: n -> 64 and 64 -> n features (n 8, 16, 32) on 128 rows over the same
//               reference, interleaved with it (both on the threads' CPU clocks);
//   spare core  the same GEMMs on rank 0 alone over the rate with every rank computing (a
//               run with fewer ranks than cores), and the same for the optimizer's passes
//               (`optimizer`): a lone rank streams with the memory system to itself;
//   imbalance   rounds of GEMM opened and closed by a host reduction, as steps meet: how much
//               longer than the ranks' mean compute a round's close waits (rates are the mean
//               over ranks), in 4 blocks spread over the probe, the lowest block's median
//               (a host's load spells read in some blocks only); with ranks sharing cores
//               (--imbalance at more ranks than cores) the first turn a rank runs after the
//               opening while its partners wait, and the scheduler's later turns;
//   attention   attention forward + backward, 512 tokens, 4 heads of 16 and of 64, full mask:
//               the rate of the dot products (4·T²·D forward + 10·T²·D backward FLOPs, as
//               --plan counts them) and the per (pair, head) softmax work apart; and on
//               packed 13-token samples, a masked tile's time per (pair, head) over a dense one's;
//               and tiles of 8 query rows or 8 keys against full ones: the rows and keys a
//               tile's fixed work costs (a tile of q rows and k keys as (q + ρ)(k + κ) pairs);
//   dropout     dropout forward + backward on a cache-resident 256 × 256 tensor: drawing and
//               applying the keep words, per element and pass;
//   activations the linears' fused activations forward and backward, and the elementwise ops
//               whose time is their arithmetic (rope forward and backward, the sinusoids), on
//               cache-resident 256 × 256 tensors, per element; the norms per element and per
//               row, from widths 64 and 512;
//   memory      triad a = b + s·c over 3 × 32 MiB;
//   optimizer   the optimizer phase's Σg² and AdamW step through Ops over 4 M elements (beyond
//               the caches): seconds per trained element;
//   collectives all-reduce of 8 B (α) and all-gather, reduce-scatter of 1 MiB in all and 32 MiB
//               a rank (β, ring, at 32 MiB; the reduction's rate at both) through the trainer's
//               MPI Comm and its progress thread, the ranks entering together:
//               the links as a step drives them, without the ranks' skew; and what a
//               gather and a reduce-scatter in flight take from GEMM bursts on the same cores
//               (the progress thread's core seconds per byte sent at 8 MiB shards, and per
//               call at 128 KiB, on the CPU clock, on the slowest rank);
//   storage     writing 256 MiB with fsync;
//   cache       the last-level cache's size (sysfs), the GEMM rates being on weights in cache;
//   fixed costs a tiny op through Ops (host seconds per call), the step's pattern of host heap
//               allocations, the flow-matching noise's draws, one of the step's blocking host
//               reductions (tools/hwprobe/fixed_costs.hpp).
// Each figure is the median over 5 runs of the median over ranks.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "comm/comm_factory.hpp"
#include "comm/host_collectives.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "arithmetic_ops.hpp"
#include "fixed_costs.hpp"
#include "kernels/attention_tiles.hpp"
#include "kernels/make_ops.hpp"

namespace {

using Clock = std::chrono::steady_clock;
int g_rank = 0, g_size = 1;

// The CPU backend the probe times, made by the factory as a run's is (run.device = cpu).
emb::Ops& cpu_ops() {
  static const std::unique_ptr<emb::Ops> ops = emb::make_ops(emb::BackendConfig{}, 0);
  return *ops;
}

// y [n, out] = x [n, in] · w [in, out] on the CPU backend.
void linear(const float* x, const float* w, float* y, int64_t n, int64_t in, int64_t out) {
  cpu_ops().linear_forward(emb::view(x, n, in), emb::view(w, in, out), emb::View{}, emb::Activation::none,
                           emb::View{}, emb::view(y, n, out));
}

// The q-quantile of v (0 <= q <= 1), the nearest rank's value.
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / double(v.size());
}

double median_over_ranks(double x) { return median(emb::all_gather(MPI_COMM_WORLD, std::vector<double>{x})); }

// Seconds of fn, every rank starting together; the mean over ranks (the typical rank: how much
// the slowest lags it is ImbalanceProbe's), then the median over runs.
double timed(const std::function<void()>& fn, int runs = 5) {
  fn();  // warm caches and pages
  std::vector<double> per_run;
  for (int r = 0; r < runs; ++r) {
    emb::barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    per_run.push_back(mean(emb::all_gather(MPI_COMM_WORLD, std::vector<double>{s})));
  }
  return median(per_run);
}

// A CPU clock's seconds so far: CLOCK_THREAD_CPUTIME_ID the calling thread's,
// CLOCK_PROCESS_CPUTIME_ID every thread's of the process.
double cpu_clock_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Seconds of fn on the calling thread's CPU clock, every rank starting together; the median
// over ranks. A ratio of two such times is of one thread's own work: a load that takes the core
// away meanwhile does not enter it, though one that shares its caches still does (at load
// average 12-16, wall-clock ratios of the same shapes moved by up to 20 % between probes, these
// by up to 15 %, and the reference rate stayed within 5 % of the quiet probe's:
// regression/plan_validation.md round 15).
double thread_seconds(const std::function<void()>& fn) {
  emb::barrier(MPI_COMM_WORLD);
  const double start = cpu_clock_seconds(CLOCK_THREAD_CPUTIME_ID);
  fn();
  return median_over_ranks(cpu_clock_seconds(CLOCK_THREAD_CPUTIME_ID) - start);
}

// The caches of rank 0's core as sysfs describes them (cpu0/cache/index*: each level's size,
// "32768K"), the largest at each level; empty where sysfs has none. sysconf's figure is the
// host's on some VMs (320 MiB here, against sysfs's 32 MiB shared by the two cores).
std::map<int, double> cache_bytes_by_level() {
  std::map<int, double> bytes;
  for (int i = 0;; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_in(dir + "level"), size_in(dir + "size");
    int level = 0;
    std::string size;
    if (!(level_in >> level) || !(size_in >> size)) break;
    const char unit = size.empty() ? 0 : size.back();
    const double scale = unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : 1.0;
    bytes[level] = std::max(bytes[level], std::atof(size.c_str()) * scale);
  }
  return bytes;
}

// The highest level's size; 0 where sysfs has none.
double last_level_cache_bytes() {
  const auto bytes = cache_bytes_by_level();
  return bytes.empty() ? 0.0 : bytes.rbegin()->second;
}

// The core's own cache below the shared last level: level 2 (1 MiB on Zen 4 and 5, 2 MiB on
// Sapphire Rapids); 1 MiB where sysfs does not say.
double private_cache_bytes() {
  const auto bytes = cache_bytes_by_level();
  const auto level2 = bytes.find(2);
  return level2 == bytes.end() ? double(1 << 20) : level2->second;
}

// Linear forward + backward of a set of shapes {in, out} on N rows, with their biases as the
// model's linears have them (the forward's add and the backward's column sums: inside the op,
// which a step's op profile counts as GEMM, and --plan has no other term for them: at one rank
// here they took width 64's ratio from 0.99-1.0 to 0.96, the narrow sets' by 6-19 %): by
// default the trunk shapes of a width-D model (F = 4D: qkv, out, up, down); the GEMM rate's are
// those of D 256 on 2048 rows.
struct TrunkGemms {
  TrunkGemms(int64_t rows = 2048, int64_t width = 256)
      : TrunkGemms(rows, {{width, 3 * width}, {width, width}, {width, 4 * width}, {4 * width, width}}) {}
  TrunkGemms(int64_t rows, std::vector<std::array<int64_t, 2>> in_out) : N(rows), shapes(std::move(in_out)) {
    int64_t features = 0, weights = 0;
    for (const auto& s : shapes) features = std::max({features, s[0], s[1]}), weights = std::max(weights, s[0] * s[1]);
    x.assign(size_t(N * features), 0.5f), y.resize(x.size()), dy.assign(x.size(), 0.1f), dx.resize(x.size());
    w.assign(size_t(weights), 0.25f), dw.resize(w.size());
    b.assign(size_t(features), 0.5f), db.resize(b.size());
  }
  int64_t N;
  std::vector<std::array<int64_t, 2>> shapes;
  std::vector<float> x, w, b, y, dy, dx, dw, db;
  double flops() const {
    double f = 0;
    for (auto& s : shapes) f += 6.0 * double(N) * double(s[0]) * double(s[1]);
    return f;
  }
  double bytes() const {
    return 4.0 * double(x.size() + y.size() + dy.size() + dx.size() + w.size() + dw.size() + b.size() + db.size());
  }
  void run() {
    for (auto& s : shapes) {
      cpu_ops().linear_forward(emb::view(x.data(), N, s[0]), emb::view(w.data(), s[0], s[1]),
                               emb::view(b.data(), 1, s[1]), emb::Activation::none, emb::View{},
                               emb::view(y.data(), N, s[1]));
      cpu_ops().linear_backward(emb::view(x.data(), N, s[0]), emb::view(w.data(), s[0], s[1]), emb::Activation::none,
                                emb::View{}, emb::view(dy.data(), N, s[1]), emb::view(dx.data(), N, s[0]),
                                emb::view(dw.data(), s[0], s[1]), emb::view(db.data(), 1, s[1]));
    }
  }
};

// A set of linears whose operands rotate over copies spanning `span_bytes`, one copy a run, so
// that with twice the core's private cache each call finds its weights and activations beyond
// it, as a step's linears do (each layer has its own weights; the backward reads activations
// written many ops before). Back to back on one set the tiny decks' width-64 shapes kept theirs
// in the private cache: a tiny_gr00t step's sgemm calls took 1.18-1.27x the same shapes replayed
// so (an LD_PRELOAD timer of every call), 1.05-1.15x shapes rotated over 16-48 sets
// (regression/plan_validation.md session 30).
struct RotatedGemms {
  RotatedGemms(const TrunkGemms& set, double span_bytes)
      : copies(size_t(std::max(1.0, std::ceil(span_bytes / set.bytes()))), set) {}
  std::vector<TrunkGemms> copies;
  size_t next = 0;
  double flops() const { return copies.front().flops(); }
  void run() {
    copies[next].run();
    next = (next + 1) % copies.size();
  }
};

double gemm_rate() {
  TrunkGemms g;
  return g.flops() / timed([&] { g.run(); });
}

// The GEMM rate by shape over the width-256 trunk's rate on the same rows (which gemm_flops
// is: the rate does not fall with rows, regression/plan_validation.md round 10):
//   widths  a width-W model's trunk shapes on 512 rows (a micro-batch of the tiny decks'
//           data.tokens_per_mb), W 32, 64, 128;
//   narrow  a linear n features wide into and out of a width-64 model ({n, 64} and {64, n}:
//           the action and patch encoders, the heads, the decoders), n 8, 16, 32, on 128 rows
//           (the tiny decks run their encoders and heads on 40-260 rows a micro-batch).
// Narrow linears pay the micro-kernel's edges, the packing and the call's set-up over fewer
// FLOPs. Each set's operands rotate over twice the private cache (RotatedGemms: at one rank
// here the narrow sets' ratios fell from 0.82, 1.0 and 1.09 to 0.68-0.70, 0.86-0.87 and
// 0.95-0.98 for n 8, 16, 32, at two the medians from 0.73, 0.93, 1.03 to 0.67, 0.86, 0.95; the
// widths' sets, already beyond it, stayed). Each run repeats its shapes to a share of the
// width-256 run's FLOPs (all of it for the widths, an eighth for the narrow sets), so the timer
// sees milliseconds; every set and the reference are interleaved, 5 rounds, each timed on the
// thread's CPU clock (thread_seconds), and each rate is the median of its rounds.
//   call_rows  a call's set-up in rows: the width-64 trunk on 16 and on 64 rows (a micro-batch
//           of one or two tiny samples' action tokens, and a few samples'), each call taking as
//           long as rows + call_rows at one rate. It is the BLAS kernel's: OpenBLAS's Haswell/Zen
//           kernels on a Zen 5 gave 4.3-6.9 rows in 43 probes, median 5.0 (a bench of widths 64
//           and 256 alike gave 4.4-6: 0.81 of the 512-row rate on 26 rows); its AVX-512
//           Cooperlake kernels on a Zen 4 gave 0-3.9, median 0.5 (112 probes at 2 ranks; 0.9
//           with the operands rotated), their small-matrix path skipping the packing (a 0 is a
//           measurement: the 16-row calls ran at the 64-row calls' rate).
struct GemmEfficiency {
  std::vector<std::pair<int, double>> widths, narrow;
  double call_rows = 0;
};

// The set-up rows c of calls whose rates on m and 4m rows are rate_m and rate_4m: a call's time
// is proportional to rows + c, so rate_m / rate_4m = (m / (m + c)) / (4m / (4m + c)).
double call_rows_from_rates(double m, double rate_m, double rate_4m) {
  return std::max(0.0, 4 * m * (rate_4m - rate_m) / (4 * rate_m - rate_4m));
}

GemmEfficiency gemm_shape_efficiency() {
  const std::vector<int> widths = {32, 64, 128}, narrow = {8, 16, 32};
  const double span = 2 * private_cache_bytes();
  std::vector<RotatedGemms> gemms;
  std::vector<double> share;
  for (int width : widths) gemms.emplace_back(TrunkGemms(512, width), span), share.push_back(1);
  for (int n : narrow)
    gemms.emplace_back(TrunkGemms(128, {{n, 64}, {64, n}}), span), share.push_back(0.125);
  constexpr int kFewRows = 16;
  const size_t few_rows = gemms.size();
  for (int rows : {kFewRows, 4 * kFewRows}) gemms.emplace_back(TrunkGemms(rows, 64), span), share.push_back(0.125);
  gemms.emplace_back(TrunkGemms(512, 256), span), share.push_back(1);  // the reference, last
  const double target = gemms.back().flops();
  std::vector<std::vector<double>> rates(gemms.size());
  for (int round = 0; round < 5; ++round)
    for (size_t i = 0; i < gemms.size(); ++i) {
      const int reps = std::max(1, int(share[i] * target / gemms[i].flops()));
      rates[i].push_back(reps * gemms[i].flops() / thread_seconds([&] {
                           for (int r = 0; r < reps; ++r) gemms[i].run();
                         }));
    }
  const double reference = median(rates.back());
  GemmEfficiency e;
  for (size_t i = 0; i < widths.size(); ++i) e.widths.emplace_back(widths[i], median(rates[i]) / reference);
  for (size_t i = 0; i < narrow.size(); ++i) e.narrow.emplace_back(narrow[i], median(rates[widths.size() + i]) / reference);
  e.widths.emplace_back(256, 1.0);
  e.call_rows = call_rows_from_rates(kFewRows, median(rates[few_rows]), median(rates[few_rows + 1]));
  return e;
}

// Rank 0's time for `work` with every rank running it over its time alone, the other ranks
// sleeping (a run with fewer ranks than cores leaves the rank a core to spare: no neighbour
// for the caches, memory and, on a VM, the host's cores). The two are interleaved, 5 pairs,
// so a load that moves meanwhile moves both; the others wait in a sleeping poll, not in MPI's
// busy-waiting barrier, which would take a core.
double spare_core_speedup(const std::function<void()>& work) {
  work();
  std::vector<double> together, alone;
  for (int r = 0; r < 5; ++r)
    for (bool everyone : {true, false}) {
      emb::barrier(MPI_COMM_WORLD);
      if (everyone || g_rank == 0) {
        const auto t0 = Clock::now();
        work();
        (everyone ? together : alone).push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      }
      emb::NonBlockingBarrier all_done;
      all_done.enter(MPI_COMM_WORLD);
      while (!all_done.done()) usleep(500);
    }
  double speedup = g_rank == 0 ? median(together) / median(alone) : 0.0;
  emb::broadcast(MPI_COMM_WORLD, &speedup, 1);
  return speedup;
}

// A step's synchronisations as the ranks meet them: a round opens with a blocking host
// reduction, as a step's head, runs `work` and closes with another reduction, as the collective
// that closes a step's backward (the collective itself is charged apart); the rounds follow one
// another with no barrier, as steps do. Per round, the ranks' means of the close's wait and of
// the work's wall time, and when each rank left the head (the node's monotonic clock, which
// every process reads alike), earliest first.
struct MeetingRound {
  double close_s = 0, compute_s = 0;
  std::vector<double> head_exits_s;  // [ranks], ascending
};

MeetingRound meeting_round(const std::function<void()>& work) {
  emb::max_over_ranks(MPI_COMM_WORLD, 1.0);
  const auto t0 = Clock::now();
  const double head_exit = std::chrono::duration<double>(t0.time_since_epoch()).count();
  work();
  const double compute = emb::seconds_since(t0);
  const auto t1 = Clock::now();
  emb::max_over_ranks(MPI_COMM_WORLD, 1.0);
  const double close = emb::seconds_since(t1);
  const std::vector<double> all = emb::all_gather(MPI_COMM_WORLD, std::vector<double>{head_exit, compute, close});
  MeetingRound r;
  for (int k = 0; k < g_size; ++k)
    r.head_exits_s.push_back(all[size_t(3 * k)]), r.compute_s += all[size_t(3 * k + 1)] / g_size,
        r.close_s += all[size_t(3 * k + 2)] / g_size;
  std::sort(r.head_exits_s.begin(), r.head_exits_s.end());
  return r;
}

// How many ranks share each core: the node's ranks over the cores their affinity masks allow
// (World::node_cores), rounded up; 1 where a mask could not be read.
int ranks_per_core(const emb::World& world) {
  return world.node_cores > 0 ? (world.local_size + world.node_cores - 1) / world.node_cores : 1;
}

// What a step's synchronisations cost beyond the typical rank's compute: blocks of 10
// meeting_rounds of ~26 ms of GEMM (a unit's or a micro-batch's work between collectives) and 0
// to 9 eighths of one more (0.4 ms each), round after round: ranks time-sharing a core end their
// equal work as far apart as their last turns, which the work's length against the scheduler's
// slice decides (4 ms here; session 17: rounds 0.7 ms of work apart moved the close's wait between
// 0.3 and 1.2 ms, with a period of one slice), and a step's work falls anywhere in it, so a
// block spans that period. The close's wait over the ranks' mean compute, a block's median, the
// lowest of the blocks (ratio): the planner charges that fraction of a step's compute (session
// 18: at 4 ranks on 2 cores the steps' waits grew with their work, from the tiny decks' to
// scaling_cpu's and over 1 to 7 micro-batches, where a charge per meeting of ratio times the
// round was 2x high on the tiny decks). The blocks are spread over the probe, and the lowest is
// taken, because a shared host's spells show in this loop of GEMMs on every core far more than
// in a step: round 56 (2 ranks on 2 cores), the blocks of the probes around each run read
// 0.003-0.32, the median of the 8 0.07-0.14 around four of the nine runs, while every run's waits
// (`other` and exposed comm) stayed at 2.4-5.5 % of its compute, in slow spells of 50 % longer
// steps too; the lowest block read 0.003-0.041. Drift a machine keeps (a slower core) shows in
// every block.
// With more ranks than cores the ranks sharing a core leave the head in the scheduler's turns:
// one a core runs on as the head ends, the next takes the core when that one's first turn
// ends, the others a turn later each. A round's exits from the head, earliest first, come in
// groups of the node's cores: the first turn is the second group's mean exit less the first
// group's, over every block's rounds their median (first_turn_s) and interquartile range
// (first_turn_spread_s). It is what the holding rank has left of its slice, so it falls anywhere
// in one: at 4 ranks on one core here the median 3.1-3.8 ms and the interquartile range 1.8-2.5
// over a probe's 40 rounds; the steps' own, from round 62's traces, 3.1-3.5 and 2.0-2.1. The later
// turns (turn_s) are timed on their own: every rank spins on the clock, a gap over 0.1 ms is a
// partner's turn and a run between two gaps one of its own (scheduler_turn_seconds; 3.97 ms
// here). Opened by a barrier instead, the ranks time-sharing a core leave it as the scheduler
// turns them, not as a step's head leaves them: the close waited 1.1-1.3 ms a round at 4 ranks
// on 2 cores, 0.9-1.0 opened as here (session 17).
struct Imbalance {
  double ratio = 0, first_turn_s = 0, first_turn_spread_s = 0, turn_s = 0;
  std::vector<double> block_ratios;  // each block's median, in the order measured
};

// Seconds a rank runs before a partner on its core takes it: every rank spins on the clock for
// 0.4 s, the median of its whole runs between gaps over 0.1 ms (a partner's turn; a timer's
// interrupt takes microseconds), the median over the ranks.
double scheduler_turn_seconds() {
  using std::chrono::duration;
  emb::barrier(MPI_COMM_WORLD);
  std::vector<double> runs;
  const auto start = Clock::now();
  auto run_start = start, last = start;
  bool whole = false;  // the run began after a gap (the first began mid-turn)
  for (auto now = start; now - start < duration<double>(0.4); now = Clock::now()) {
    if (now - last > duration<double>(1e-4)) {
      if (whole) runs.push_back(duration<double>(last - run_start).count());
      whole = true, run_start = now;
    }
    last = now;
  }
  return median_over_ranks(runs.empty() ? 0.0 : median(runs));
}

class ImbalanceProbe {
 public:
  static constexpr int kRoundsPerBlock = 10;  // 0 to 9 eighths: one slice's period

  explicit ImbalanceProbe(const emb::World& world)
      : ranks_per_core_(ranks_per_core(world)), cores_(std::max(1, world.node_cores)), a_(kRows * kRows, 0.5f),
        w_(kRows * kRows, 0.25f), y_(kRows * kRows) {
    meeting_round(gemms(1, 0));  // warm caches and pages
    if (ranks_per_core_ > 1) turn_s_ = scheduler_turn_seconds();
  }

  void measure_block() {
    std::vector<double> ratios;
    for (int r = 0; r < kRoundsPerBlock; ++r) {
      const MeetingRound round = meeting_round(gemms(8, r));
      ratios.push_back(round.close_s / round.compute_s);
      if (ranks_per_core_ > 1) first_turns_.push_back(group_mean(round.head_exits_s, 1) - group_mean(round.head_exits_s, 0));
    }
    block_ratios_.push_back(std::max(0.0, median(ratios)));
  }

  Imbalance result() const {
    Imbalance i{*std::min_element(block_ratios_.begin(), block_ratios_.end()), 0, 0, turn_s_, block_ratios_};
    if (!first_turns_.empty())
      i.first_turn_s = median(first_turns_),
      i.first_turn_spread_s = quantile(first_turns_, 0.75) - quantile(first_turns_, 0.25);
    return i;
  }

 private:
  static constexpr int kRows = 384;

  // The mean of the group-th `cores_` exits.
  double group_mean(const std::vector<double>& exits, int group) const {
    const size_t begin = size_t(group * cores_), end = std::min(exits.size(), size_t((group + 1) * cores_));
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += exits[i];
    return sum / double(end - begin);
  }

  // 384³ GEMMs and eighths of one (on 48 rows).
  std::function<void()> gemms(int whole, int eighths) {
    return [this, whole, eighths] {
      for (int i = 0; i < whole; ++i) linear(a_.data(), w_.data(), y_.data(), kRows, kRows, kRows);
      for (int i = 0; i < eighths; ++i) linear(a_.data(), w_.data(), y_.data(), kRows / 8, kRows, kRows);
    };
  }

  int ranks_per_core_, cores_;
  double turn_s_ = 0;
  std::vector<float> a_, w_, y_;
  std::vector<double> block_ratios_, first_turns_;
};

double gemm_peak() {
  const int n = 1024;
  std::vector<float> a(size_t(n) * n, 0.5f), w(size_t(n) * n, 0.25f), y(size_t(n) * n);
  return 2.0 * n * n * n / timed([&] { linear(a.data(), w.data(), y.data(), n, n, n); });
}

// The probe's attention: T = 512 tokens in 4 heads, the full mask over one sample (every tile
// dense) or over samples of kPackedSampleTokens packed end to end (every computed tile masked:
// the mask rule decided per pair, as on a tiny deck's short samples).
constexpr int64_t kAttentionTokens = 512, kAttentionHeads = 4, kPackedSampleTokens = 13;

std::vector<int32_t> attention_seq(bool packed, int64_t tokens = kAttentionTokens) {
  std::vector<int32_t> seq(size_t(tokens), 0);
  if (packed)
    for (int64_t t = 0; t < tokens; ++t) seq[size_t(t)] = int32_t(t / kPackedSampleTokens);
  return seq;
}

emb::AttnIndex attention_index(const std::vector<int32_t>& q_seq, const std::vector<int32_t>& k_seq) {
  return {emb::AttnMask::full, q_seq.data(), q_seq.data(), q_seq.data(), k_seq.data(), k_seq.data(), k_seq.data(), {}};
}

// (pair, head)s the tiled kernels compute under `seq`'s mask (kernels/attention_tiles.hpp).
double computed_pair_heads(const std::vector<int32_t>& seq) {
  const emb::AttnTiles tiles(attention_index(seq, seq), kAttentionTokens, kAttentionTokens);
  return double(tiles.pairs(emb::TileKind::dense) + tiles.pairs(emb::TileKind::masked)) * kAttentionHeads;
}

// Attention forward (+ backward) at head dim hd of queries `q_seq` over keys `k_seq` (one
// sequence id a token, the full mask), `calls` times, as a callable.
std::function<void()> attention_run(int hd, bool backward, const std::vector<int32_t>& q_seq,
                                    const std::vector<int32_t>& k_seq, int calls = 1) {
  struct Buffers {
    std::vector<int32_t> q_seq, k_seq;
    std::vector<float> q, k, v, out, lse, dout, dq, dk, dv;
  };
  const int64_t Tq = int64_t(q_seq.size()), Tk = int64_t(k_seq.size());
  const int H = int(kAttentionHeads), D = H * hd;
  const size_t nq = size_t(Tq) * D, nk = size_t(Tk) * D;
  auto b = std::make_shared<Buffers>(Buffers{q_seq, k_seq, std::vector<float>(nq, 0.1f), std::vector<float>(nk, 0.1f),
                                             std::vector<float>(nk, 0.1f), std::vector<float>(nq),
                                             std::vector<float>(size_t(Tq) * H), std::vector<float>(nq, 0.01f),
                                             std::vector<float>(nq), std::vector<float>(nk), std::vector<float>(nk)});
  return [b, hd, backward, H, D, Tq, Tk, calls, idx = attention_index(b->q_seq, b->k_seq)] {
    const emb::AttnConfig cfg{H, hd};
    const auto rows = [](std::vector<float>& x, int64_t T, int64_t cols) { return emb::view(x.data(), T, cols); };
    for (int call = 0; call < calls; ++call) {
      cpu_ops().attention_forward(rows(b->q, Tq, D), rows(b->k, Tk, D), rows(b->v, Tk, D), rows(b->out, Tq, D),
                                  rows(b->lse, Tq, H), cfg, idx);
      if (backward)
        cpu_ops().attention_backward(rows(b->q, Tq, D), rows(b->k, Tk, D), rows(b->v, Tk, D), rows(b->out, Tq, D),
                                     rows(b->lse, Tq, H), rows(b->dout, Tq, D), rows(b->dq, Tq, D), rows(b->dk, Tk, D),
                                     rows(b->dv, Tk, D), cfg, idx);
    }
  };
}

// The fixed work of a tile besides its pairs' (a few rows or keys of it run at a lower rate
// than a full tile's): each query row's pass over a key tile (its maximum, sum and rescale of
// the accumulated output, kernels/cpu/attention.cpp) and each key's share of the two GEMMs'
// set-up. A tile of q rows and k keys costs about as (q + ρ)(k + κ) pairs at one rate per
// pair: micro-batches of two or three short samples (tiles of 26 rows, 4 keys) cost up to
// twice their pairs at the full tiles' rate (session 27, head dim 16, 19 shapes from 1 x 64 to
// 512 x 512: ρ ≈ 4, κ ≈ 10-12 and 1.3-1.8 µs a call within 7 % rms). ρ from 8 tiles of 8 rows
// over 8 full ones (8 queries over 512 keys, 64 over 512: t8 / t64 = (8 + ρ) / (64 + ρ)), κ
// alike from 512 queries over 8 and 64 keys, a call's fixed work in them (5.6-7.3 rows, 11-19
// keys); fwd + bwd at head dim 16 (the tiny decks'), on the threads' CPU clocks, interleaved
// with the probe's other attention runs.
constexpr int64_t kFewTileRows = 8;

double tile_padding_from_ratio(double few_over_full) {
  const double full = double(emb::kAttnTileQ), few = double(kFewTileRows);
  return few_over_full < 1 ? std::max(0.0, (full * few_over_full - few) / (1 - few_over_full)) : 0.0;
}

// Attention's time per (pair, head) of a dense tile is c + 14·hd / rate: the softmax's work,
// whatever the head dim, and the dot products (4·hd forward, 10·hd backward FLOPs, as --plan
// counts them). Two head dims, 16 and 64, give both. The forward's share of the time is measured
// at both (forward alone over forward + backward): the softmax's work is about as long in either
// pass (the backward recomputes the probabilities) where the dot products are 4 to 10, so the
// share falls with the head dim (0.36-0.39 at 16, 0.32-0.33 at 64 here; the tiny decks' heads
// are 16 wide, scaling_cpu's 64). The four are interleaved, 9 rounds, each the median of its
// rounds (one run each: timed's median over ranks): a difference of two times taken minutes apart
// on a loaded machine would be mostly the load.
// A masked tile costs more per (pair, head) than a dense one: its allowed pairs decided once per
// call (kernels/cpu/attention_tile_masks.hpp), the forbidden scores set to −∞ for every head in
// the forward and again in the backward (tile_scores), and its partial rows. Its ratio, per computed (pair, head), at head dim 16:
// packed 13-token samples (every computed tile masked, as on the tiny decks) over one
// 512-token sample (every tile dense), interleaved in the same rounds, on the threads' CPU
// clocks (a ratio of one thread's own work, as the GEMM tables).
struct AttentionCost {
  double flops_per_s = 0, pair_head_s = 0, masked_tile_ratio = 1;
  double forward_fraction_16 = 0, forward_fraction_64 = 0;  // at head dims 16 and 64
  double tile_rows = 0, tile_keys = 0;                      // ρ and κ
};

AttentionCost attention_cost() {
  const std::vector<int32_t> one = attention_seq(false), packed = attention_seq(true);
  const double pair_heads = computed_pair_heads(one), packed_pair_heads = computed_pair_heads(packed);
  const auto both16 = attention_run(16, true, one, one), both64 = attention_run(64, true, one, one),
             fwd16 = attention_run(16, false, one, one), fwd64 = attention_run(64, false, one, one),
             masked16 = attention_run(16, true, packed, packed);
  // The tile runs: 8 tiles each, 8 calls (~1 to 6 ms).
  const std::vector<int32_t> few = attention_seq(false, kFewTileRows), full = attention_seq(false, emb::kAttnTileQ);
  const auto few_rows = attention_run(16, true, few, one, 8), full_rows = attention_run(16, true, full, one, 8),
             few_keys = attention_run(16, true, one, few, 8), full_keys = attention_run(16, true, one, full, 8);
  both16(), masked16(), few_rows(), full_rows(), few_keys(), full_keys();  // warm caches and pages for the CPU clock
  std::vector<double> t16, t64, f16, f64, ratio, rows_ratio, keys_ratio;
  for (int r = 0; r < 9; ++r) {
    t16.push_back(timed(both16, 1) / pair_heads);
    t64.push_back(timed(both64, 1) / pair_heads);
    f16.push_back(timed(fwd16, 1) / pair_heads);
    f64.push_back(timed(fwd64, 1) / pair_heads);
    const double dense = thread_seconds(both16) / pair_heads, masked = thread_seconds(masked16) / packed_pair_heads;
    ratio.push_back(masked / dense);
    rows_ratio.push_back(thread_seconds(few_rows) / thread_seconds(full_rows));
    keys_ratio.push_back(thread_seconds(few_keys) / thread_seconds(full_keys));
  }
  const double s16 = median(t16), s64 = median(t64);
  const double per_dim = std::max((s64 - s16) / 48, 1e-15);  // seconds per head-dim unit
  return {14 / per_dim,
          std::max(s16 - 16 * per_dim, 0.0),
          std::max(median(ratio), 1.0),
          std::min(1.0, median(f16) / s16),
          std::min(1.0, median(f64) / s64),
          tile_padding_from_ratio(median(rows_ratio)),
          tile_padding_from_ratio(median(keys_ratio))};
}

// Dropout's seconds per element and pass besides its memory traffic: forward and backward
// through Ops at upstream's p = 0.2 on 256 rows of 256 (rows of 4 samples), a tensor the caches
// hold, so the time is drawing each element's keep word and applying it; per element and pass.
double dropout_element_seconds() {
  const int64_t N = 256;
  const int C = 256, reps = 20;
  std::vector<float> x(size_t(N) * C, 0.5f), y(x.size()), dx(x.size());
  std::vector<int32_t> seq(static_cast<size_t>(N)), token(static_cast<size_t>(N));
  for (int64_t r = 0; r < N; ++r) seq[size_t(r)] = int32_t(r % 4), token[size_t(r)] = int32_t(r / 4);
  const std::vector<int64_t> sample_id = {0, 1, 2, 3};
  const emb::DropoutRows rows{seq.data(), token.data(), sample_id.data()};
  const emb::DropoutConfig cfg{0.2f, 1234, 1, 0};
  const auto all = [&](std::vector<float>& t) { return emb::view(t.data(), N, C); };
  return timed([&] {
    for (int i = 0; i < reps; ++i) {
      cpu_ops().dropout_forward(all(x), all(y), cfg, rows);
      cpu_ops().dropout_backward(all(y), all(dx), cfg, rows);
    }
  }) / (2.0 * reps * double(N) * C);
}

// The activation functions the linears fuse (linear_forward's act(pre), linear_backward's
// act'(pre)·dy): forward and backward through Ops on 256 rows of 256 (a tensor the caches hold,
// so the time is the function's arithmetic, not its bytes: tanh and exp are tens of
// instructions an element), per element and pass, by activation.
struct ActivationSeconds {
  emb::Activation act;
  double forward_s = 0, backward_s = 0;
};

std::vector<ActivationSeconds> activation_element_seconds() {
  const int64_t N = 256;
  const int C = 256, reps = 20;
  std::vector<float> x(size_t(N) * C), y(x.size()), dy(x.size(), 0.25f), dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 97) - 48) / 16.0f;  // -3 … 3: both branches
  const auto all = [&](std::vector<float>& t) { return emb::view(t.data(), N, C); };
  std::vector<ActivationSeconds> out;
  for (emb::Activation act : emb::kFusedActivations) {
    ActivationSeconds a{act};
    a.forward_s = timed([&] {
                    for (int i = 0; i < reps; ++i) cpu_ops().activation_forward(act, all(x), all(y));
                  }) / (reps * double(N) * C);
    a.backward_s = timed([&] {
                     for (int i = 0; i < reps; ++i) cpu_ops().activation_backward(act, all(x), all(dy), all(dx));
                   }) / (reps * double(N) * C);
    out.push_back(a);
  }
  return out;
}

// The elementwise ops whose time is their arithmetic (kArithmeticElementwiseOps), through Ops,
// per element of the tensor they write: rope forward and backward on 256 tokens of 4 heads of 64
// and the sinusoids of 256 timesteps over 256 columns (tensors the caches hold); the norms
// (row_statistic_op) also per row: each on 64 Ki elements as 4096 rows of 16 and as 128 rows of
// 512 (their 4-9 tensors beyond the private cache, as a step's are: the GEMM probes' rotation),
// and with t(w), the seconds per element at width w, taken as e + r / w, e (per element) and r
// (per row) solved from the two (neither below 0). The models' norms run on rows of 8 to 1536
// (the embodiments' state and action encoders to the trunks): here layernorm_backward took 5.4,
// 3.0, 1.8, 1.6 and 1.4 ns an element at widths 8, 16, 32, 64 and 512.
struct ArithmeticSeconds {
  std::string op;
  double element_s = 0, row_s = 0;
};

std::vector<ArithmeticSeconds> elementwise_arithmetic_seconds() {
  const int reps = 80;  // 10-20 ms a run on a CPU
  const auto per_element = [&](const std::string& op, int64_t rows, int cols) {
    emb::probe::ArithmeticOpTensors tensors(rows, cols);
    return timed([&] {
             for (int i = 0; i < reps; ++i) tensors.run(cpu_ops(), op);
           }) / (reps * double(tensors.elements()));
  };
  std::vector<ArithmeticSeconds> out;
  for (const char* op : emb::kArithmeticElementwiseOps) {
    if (!emb::probe::row_statistic_op(op)) {
      out.push_back({op, per_element(op, 256, 256), 0});
      continue;
    }
    const int narrow = 16, wide = 512;
    const double t_narrow = per_element(op, 65536 / narrow, narrow), t_wide = per_element(op, 65536 / wide, wide);
    const double row_s = std::max(0.0, (t_narrow - t_wide) / (1.0 / narrow - 1.0 / wide));
    out.push_back({op, std::max(0.0, t_wide - row_s / wide), row_s});
  }
  return out;
}

// The optimizer phase's seconds per trained element (train_step: Optimizer's global_grad_norm,
// then its step): Σg² of the gradients, then AdamW through Ops (fp32 parameters, gradients and
// both moments, weight decay on) over 4 M elements, 64 MiB in all, far beyond the last-level
// cache, 4 times, every rank at once; the median of 5 runs, each on the thread's CPU clock
// (thread_seconds: at load average 2-3 wall-clock runs of the same passes spread 0.8-1.9 ns an
// element). The update streams its four arrays in one pass; the triad's rate over AdamW's bytes
// predicted twice the phase's time (regression/plan_validation.md round 20).
struct OptimizerPasses {
  static constexpr int64_t n = int64_t(4) << 20;
  static constexpr int reps = 4;
  std::vector<float> p = std::vector<float>(size_t(n), 0.5f), g = std::vector<float>(size_t(n), 0.01f),
                     m = std::vector<float>(size_t(n), 0.0f), v = std::vector<float>(size_t(n), 0.0f);
  emb::AdamWConfig cfg = weight_decayed();
  int64_t step = 0;
  double sum = 0;
  static emb::AdamWConfig weight_decayed() {
    emb::AdamWConfig c;
    c.weight_decay = 0.01f;  // train.weight_decay's default
    return c;
  }
  void run() {
    const auto all = [](std::vector<float>& t) { return emb::view(t.data(), 1, n); };
    for (int r = 0; r < reps; ++r) {
      cpu_ops().sum_squares(all(g), &sum);
      cpu_ops().adamw_step(all(p), all(g), all(m), all(v), cfg, ++step, 1.0f, 1.0f);
    }
  }
};

double optimizer_element_seconds() {
  OptimizerPasses passes;
  passes.run();  // warm pages
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) runs.push_back(thread_seconds([&] { passes.run(); }));
  return median(runs) / (double(OptimizerPasses::reps) * double(OptimizerPasses::n));
}

double triad_bandwidth() {
  const size_t n = size_t(8) << 20;  // 32 MiB of floats per array
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  const double t = timed([&] {
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
  });
  return 3.0 * double(n) * sizeof(float) / t;
}

// The reduction's rate at one collective size: `full_bytes` the full buffer (a reduce-scatter's
// input), `bytes_per_s` the bytes a rank sums per second beyond the all-gather's pass.
struct ReduceAtSize {
  double full_bytes = 0, bytes_per_s = 0;
};

struct Fabric {
  double latency_s = 0, bytes_per_s = 0;
  std::vector<ReduceAtSize> reduce;  // ascending by size; the largest is reduce_bytes_per_s
};

// The links as the trainer drives them, every rank entering each collective together (after a
// barrier): the project's MPI Comm (src/comm/comm_mpi.hpp: non-blocking collectives run by its
// progress thread, which polls with pauses so as not to take a core from compute), issued and
// waited for. α from 8-byte all-reduces (2(p−1) hops), β from the ring pass ((p−1)/p·n bytes
// per rank) of 32 MiB a rank gathers, and the reduction's rate from how much longer a
// reduce-scatter of the same bytes takes than the gather (its sums, and the reduce-scatter's
// algorithm: at both sizes our ring, comm/ring_reduce_scatter.hpp), at two sizes: a full buffer
// of 1 MiB (a tiny deck's bucket, 0.84 MB) and 32 MiB a rank. Open MPI's own non-blocking
// reduce-scatter, used before the ring, summed ~0.02-0.09 GB/s at 32 MiB a rank on this VM, all
// on rank 0 (DESIGN.md "Own ring reduce-scatter"). A sum reads two operands and writes one, so
// the rate is held at a third of the triad's (`memory`): with the ring the difference is mostly
// within the noise. The two sizes are interleaved, 7 rounds, each
// time the median of its rounds. MPI's blocking collectives run 2-3 times faster on this
// machine, but no step issues them. The ranks' skew is measured apart (ImbalanceProbe).
Fabric collectives(const emb::World& world, double memory_bytes_per_s) {
  const std::unique_ptr<emb::Comm> comm = emb::make_comm(world, {emb::CommBackend::mpi});
  const int p = g_size;
  const std::vector<int64_t> shards = {(int64_t(256) << 10) / p, int64_t(8) << 20};  // floats: 1 MiB in all, 32 MiB a rank
  std::vector<float> full(size_t(shards.back() * p), 1.0f), shard(static_cast<size_t>(shards.back()));
  Fabric fabric;
  fabric.latency_s = timed([&] { comm->all_reduce(full.data(), 2, emb::DType::f32, emb::ReduceOp::sum).wait(); }, 21) /
                     (2 * std::max(1, p - 1));
  std::vector<std::vector<double>> gather(shards.size()), scatter(shards.size());
  for (int round = 0; round < 7; ++round)
    for (size_t i = 0; i < shards.size(); ++i) {
      const int64_t n = shards[i] * p;
      gather[i].push_back(timed([&] { comm->all_gather(shard.data(), full.data(), n, emb::DType::f32).wait(); }, 1));
      scatter[i].push_back(timed(
          [&] { comm->reduce_scatter(full.data(), shard.data(), n, emb::DType::f32, emb::ReduceOp::sum).wait(); }, 1));
    }
  for (size_t i = 0; i < shards.size(); ++i) {
    // The bytes a rank moves: (p−1)/p of the buffer over a ring; one rank (a 1-core machine)
    // copies the whole buffer, which is then the link's figure (a file the planner can read; its
    // time-sharing ranks take time_sharing_link from hwprobe --imbalance).
    const double n = double(shards[i] * p) * sizeof(float), moved = p > 1 ? double(p - 1) / p * n : n;
    const double sums_s = std::max(median(scatter[i]) - median(gather[i]), 3 * moved / memory_bytes_per_s);
    fabric.reduce.push_back({n, moved / sums_s});
    if (i + 1 == shards.size()) fabric.bytes_per_s = moved / (median(gather[i]) - (p - 1) * fabric.latency_s);
  }
  return fabric;
}

// The core seconds the progress thread takes from the rank's compute, per collective call and
// per byte a rank sends: GEMM bursts (a D 128 trunk on 512 rows, about 3 times a collective
// pair's time) alone, and with an all-gather and a reduce-scatter issued just before,
// interleaved; the burst's median slowdown on the slowest rank, at shards of 8 MiB (a ZeRO-3
// step's pair: the bytes' cost) and of 128 KiB (a tiny deck's bucket: the calls' cost, which the
// thread's wake-ups and polls take whatever the size; at 2 ranks 0.2 ms a forward here where
// the 8 MiB figure gave 0.05, regression/plan_validation.md session 24): the two sizes' pairs
// give the bytes' cost and the calls'. The per-byte figure counts the bytes a rank sends ((p-1)/p
// of each full buffer): before our ring reduce-scatter (comm/ring_reduce_scatter.hpp) Open MPI's
// libnbc reduced to rank 0 and scattered from it, so
// rank 0's core did every sum and every rank waited for it at the next collective (round 12,
// scaling_cpu on 2 ranks: rank 0's fwd + bwd 200 ms, rank 1's 106); the ring spreads the sums
// evenly. 0 with one rank (its collectives are copies, which the planner costs at memory speed).
// The slowdown is read on the process's CPU clock (the GEMMs' thread and the progress thread
// together), not the wall clock: a rank's core is slowed by its own progress thread's seconds
// and by those of the ranks time-sharing the core with it, which each spend as much (the
// ranks per core times its own). On the wall clock a burst of ranks time-sharing a core also
// holds its partners' turns, whole scheduler slices that fall in one burst and not the next:
// ±4 ms a burst against a call's 0.3 ms at 4 ranks on 2 cores, which moved the per-call figure
// between 0 and 1.7 ms from one probe to the next (session 34; the process's CPU clock: ±0.5 ms,
// and with a core per rank both clocks read the same slowdowns).
const char* const kCommCoreHow =
    "GEMM bursts' slowdown on the CPU clock with an all-gather and a reduce-scatter of 8 MiB shards in flight on "
    "the progress thread, less that of 128 KiB shards, over the difference of the bytes a rank sends, on the "
    "slowest rank, times the ranks sharing its core";
const char* const kCommCallHow =
    "GEMM bursts' slowdown on the CPU clock with an all-gather and a reduce-scatter of 128 KiB shards in flight on "
    "the progress thread, less their bytes at the per-byte figure, per collective, on the slowest rank, times the "
    "ranks sharing its core";
struct CommCore {
  double per_byte = 0, per_call = 0;
};

// The slowest rank's median slowdown of GEMM bursts with a collective pair of `shard` floats a
// rank in flight, on its process's CPU clock (the progress thread's seconds with the GEMMs'), and
// the bytes a rank sends in the pair.
std::pair<double, double> pair_slowdown(emb::Comm& comm, int64_t shard, int rounds) {
  std::vector<float> full(size_t(shard * g_size), 1.0f), part(static_cast<size_t>(shard)), summed(part.size());
  const auto pair = [&] {
    emb::CommHandle g = comm.all_gather(part.data(), full.data(), shard * g_size, emb::DType::f32);
    emb::CommHandle r = comm.reduce_scatter(full.data(), summed.data(), shard * g_size, emb::DType::f32, emb::ReduceOp::sum);
    return std::make_pair(g, r);
  };
  const double pair_s = timed([&] {
    auto [g, r] = pair();
    g.wait(), r.wait();
  });
  TrunkGemms burst(512, 128);
  const double burst_s = timed([&] { burst.run(); });
  const int reps = int(emb::max_over_ranks(MPI_COMM_WORLD, std::ceil(3 * pair_s / burst_s)));
  std::vector<double> slowdown;
  for (int k = 0; k < rounds; ++k) {
    double cpu_s[2];
    for (int with : {0, 1}) {
      emb::barrier(MPI_COMM_WORLD);
      const double start = cpu_clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
      std::pair<emb::CommHandle, emb::CommHandle> inflight;
      if (with) inflight = pair();
      for (int r = 0; r < reps; ++r) burst.run();
      inflight.first.wait(), inflight.second.wait();
      cpu_s[with] = cpu_clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - start;
    }
    slowdown.push_back(cpu_s[1] - cpu_s[0]);
  }
  const double sent = 2.0 * double(g_size - 1) / g_size * double(shard * g_size) * sizeof(float);
  return {std::max(0.0, emb::max_over_ranks(MPI_COMM_WORLD, median(slowdown))), sent};
}

CommCore comm_core_seconds(const emb::World& world) {
  if (g_size < 2) return {};
  const std::unique_ptr<emb::Comm> comm = emb::make_comm(world, {emb::CommBackend::mpi});
  const auto [large_s, large_sent] = pair_slowdown(*comm, int64_t(2) << 20, 5);
  const auto [small_s, small_sent] = pair_slowdown(*comm, int64_t(32) << 10, 15);
  // Each pair is two calls and its bytes: the sizes' difference is the bytes' alone. The core
  // pays as much for each rank that shares it.
  const double per_byte = std::max(0.0, large_s - small_s) / (large_sent - small_sent);
  const double per_call = std::max(0.0, small_s - per_byte * small_sent) / 2;
  const int ranks_a_core = ranks_per_core(world);
  return {ranks_a_core * per_byte, ranks_a_core * per_call};
}

double write_bandwidth() {
  const size_t bytes = size_t(256) << 20;
  std::vector<char> buf(bytes, 1);
  const std::string path = "outputs/hwprobe-" + std::to_string(g_rank) + ".tmp";
  const double t = timed(
      [&] {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ::write(fd, buf.data(), bytes) != ssize_t(bytes) || ::fsync(fd) != 0) {
          std::fprintf(stderr, "hwprobe: cannot write %s\n", path.c_str());
          emb::abort_world(1);
        }
        ::close(fd);
      },
      3);
  ::unlink(path.c_str());
  return double(bytes) * g_size / t;
}

// A figure and the measurement it came from.
struct Figures {
  std::string how;  // the command that measured it
  nlohmann::json operator()(double value, const std::string& what) const {
    return {{"value", value}, {"source", how + what}};
  }
};

nlohmann::json imbalance_figures(const Figures& fig, const Imbalance& imbalance) {
  std::string blocks;
  for (double r : imbalance.block_ratios) blocks += (blocks.empty() ? "" : " ") + emb::str(r);
  return {{"rank_imbalance", fig(imbalance.ratio, "blocks of " + std::to_string(ImbalanceProbe::kRoundsPerBlock) + " rounds of ~26 ms of GEMM opened and closed by a host reduction, back to back, spread over the probe: the close's wait over the ranks' mean compute, a block's median, the lowest of the blocks (" + blocks + ")")},
          {"rank_imbalance_ranks", fig(g_size, "the ranks it was measured with")},
          {"first_turn_seconds", fig(imbalance.first_turn_s, "the same rounds' opening reduction: when the ranks that took their core second left it less when the first ones did, the median over all (0: a core per rank)")},
          {"first_turn_spread_seconds", fig(imbalance.first_turn_spread_s, "the same first turns' interquartile range: --plan takes a step's first turn uniform over the median ± it")},
          {"turn_seconds", fig(imbalance.turn_s, "every rank spinning on the clock for 0.4 s: the median of its runs between a partner's turns, the median over the ranks (0: a core per rank)")}};
}

// A link's figures as the planner reads them (hardware.hpp: intra_node's keys, and
// time_sharing_link's): the ring pass, the hop latency and the sums' rate by buffer size (with
// one rank a reduce-scatter sums nothing: no table).
nlohmann::json link_figures(const Figures& fig, const Fabric& fabric) {
  nlohmann::json link = {
      {"bytes_per_s", fig(fabric.bytes_per_s, g_size > 1 ? "32 MiB all-gathers through the trainer's MPI Comm (progress thread), ranks entering together, ring pass"
                                                         : "32 MiB all-gathered by one rank through the trainer's MPI Comm: the buffer's copy")},
      {"latency_s", fig(fabric.latency_s, "8-byte all-reduce through the trainer's MPI Comm, ranks entering together, over 2(p-1) hops")}};
  if (g_size > 1)
    for (const ReduceAtSize& r : fabric.reduce)
      link["reduce_bytes_per_s_by_size"][std::to_string(int64_t(r.full_bytes))] =
          fig(r.bytes_per_s, "reduce-scatters of this full buffer (bytes) through the trainer's MPI Comm over its bytes per rank, beyond the all-gather's time, sizes interleaved");
  return link;
}

struct Measured {
  double gemm = 0, peak = 0, memory = 0, spare_core = 1, memory_spare_core = 1, write = 0, cache = 0;
  Imbalance imbalance;
  double op_call = 0, allocation = 0, noise_draw = 0, sync = 0, dropout_element = 0, optimizer_element = 0;
  CommCore comm_core;
  std::vector<ActivationSeconds> activations;
  std::vector<ArithmeticSeconds> elementwise;
  GemmEfficiency gemm_shapes;
  AttentionCost attention;
  Fabric fabric;
};

// Every figure, every rank measuring at once.
Measured measure(const emb::World& world) {
  Measured m;
  ImbalanceProbe imbalance(world);  // its blocks spread over the probe's ~20 s
  imbalance.measure_block();
  m.gemm = gemm_rate();
  m.gemm_shapes = gemm_shape_efficiency();
  m.peak = gemm_peak();
  m.memory = triad_bandwidth();
  imbalance.measure_block();
  m.optimizer_element = optimizer_element_seconds();
  m.attention = attention_cost();
  m.dropout_element = dropout_element_seconds();
  m.activations = activation_element_seconds();
  m.elementwise = elementwise_arithmetic_seconds();
  if (g_size > 1) {
    TrunkGemms gemms;
    m.spare_core = spare_core_speedup([&] { gemms.run(); });
    OptimizerPasses passes;
    m.memory_spare_core = spare_core_speedup([&] { passes.run(); });
  }
  imbalance.measure_block();
  m.fabric = collectives(world, m.memory);
  m.comm_core = comm_core_seconds(world);
  m.write = write_bandwidth();
  imbalance.measure_block();
  m.imbalance = imbalance.result();
  m.cache = last_level_cache_bytes();
  m.op_call = median_over_ranks(emb::probe::op_call_seconds(cpu_ops()));
  m.allocation = median_over_ranks(emb::probe::allocation_seconds());
  m.noise_draw = median_over_ranks(emb::probe::noise_draw_seconds());
  double sums[4] = {1, 2, 3, 4};  // loss, samples, tokens, computed tokens: train_step's reduction
  m.sync = timed([&] { emb::sum_over_ranks(MPI_COMM_WORLD, sums, 4); }, 21);
  return m;
}

nlohmann::json hardware_file(const std::string& name, const Figures& fig, const Measured& m) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  nlohmann::json hw = {
      {"name", name},
      {"ranks_share_node", true},
      {"activations_in_compute_precision", false},
      {"comm_overlaps_compute", false},
      {"gemm_rate_on_cached_weights", true},
      {"last_level_cache_bytes", fig(m.cache, "/sys/devices/system/cpu/cpu0/cache: the highest level's size, shared by the node's ranks")},
      {"devices_per_node", fig(g_size, "one rank per core")},
      {"spare_core_speedup", fig(m.spare_core, "rank 0's linear fwd+bwd time with every rank computing over its time alone, interleaved")},
      {"memory_spare_core_speedup", fig(m.memory_spare_core, "rank 0's time for the optimizer's passes (Σg² and AdamW over 4 M elements, 64 MiB) with every rank streaming over its time alone, interleaved")},
      {"peak_flops", {{"fp32", fig(m.peak, "1024^3 sgemm per core")}, {"bf16", fig(m.peak, "bf16 computes in fp32 on the CPU")}}},
      {"gemm_flops", {{"fp32", fig(m.gemm, "linear fwd+bwd, D 256 F 1024 shapes, 2048 rows, per core")},
                      {"bf16", fig(m.gemm, "bf16 computes in fp32 on the CPU")}}},
      {"attention_flops", {{"fp32", fig(m.attention.flops_per_s, "attention fwd+bwd, 512 tokens, 4 heads of 16 and of 64: the dot products' rate, per core")},
                           {"bf16", fig(m.attention.flops_per_s, "bf16 computes in fp32 on the CPU")}}},
      {"attention_forward_fraction_by_head_dim",
       {{"16", fig(m.attention.forward_fraction_16, "attention fwd over fwd+bwd seconds, 512 tokens, 4 heads of 16, interleaved with 64")},
        {"64", fig(m.attention.forward_fraction_64, "attention fwd over fwd+bwd seconds, 512 tokens, 4 heads of 64, interleaved with 16")}}},
      {"attention_pair_head_seconds", fig(m.attention.pair_head_s, "attention fwd+bwd, 512 tokens, 4 heads of 16 and of 64: the softmax's seconds per (pair, head), per core")},
      {"attention_masked_tile_ratio", fig(m.attention.masked_tile_ratio, "attention fwd+bwd, 512 tokens, 4 heads of 16: seconds per computed (pair, head) on samples of 13 tokens packed (every computed tile masked) over one sample of 512 (every tile dense), interleaved, thread CPU time, per core")},
      {"attention_tile_rows", fig(m.attention.tile_rows, "attention fwd+bwd at head dim 16, 4 heads, full mask: 8 tiles of 8 query rows (8 over 512 keys) over 8 full ones (64 over 512), interleaved, thread CPU time: the rows a tile's fixed work costs (a tile of q rows and k keys as (q + rows)(k + keys) pairs at one rate), per core")},
      {"attention_tile_keys", fig(m.attention.tile_keys, "attention fwd+bwd at head dim 16, 4 heads, full mask: 8 tiles of 8 keys (512 queries over 8) over 8 full ones (512 over 64), interleaved, thread CPU time: the keys a tile's fixed work costs (a tile of q rows and k keys as (q + rows)(k + keys) pairs at one rate), per core")},
      {"dropout_element_seconds", fig(m.dropout_element, "dropout fwd+bwd at p 0.2 on 256 x 256 (cache-resident): seconds per element and pass, per core")},
      {"optimizer_element_seconds", fig(m.optimizer_element, "the optimizer phase's sum of squares of the gradients and AdamW step through Ops (fp32 parameters, gradients, moments, weight decay 0.01) over 4 M elements (64 MiB), thread CPU time: seconds per trained element, per core")},
      {"memory", {{"bytes_per_s", fig(m.memory, "triad over 3 x 32 MiB, per core")},
                  {"bytes", fig(double(pages) * double(page), "sysconf physical pages, shared by the ranks")},
                  {"reserved_bytes", fig(0.5e9, "MPI, HDF5 and the loader's buffers per rank, estimated")}}},
      {"intra_node", link_figures(fig, m.fabric)},
      {"storage", {{"read_bytes_per_s_per_node", {{"value", 1.9e9}, {"source", "MACHINE.md: single-process read from page cache"}}},
                   {"write_bytes_per_s_per_node", fig(m.write, "256 MiB writes with fsync, every rank at once")},
                   {"write_bytes_per_s_total", fig(m.write, "one node")}}},
  };
  hw["intra_node"]["reduce_bytes_per_s"] = fig(m.fabric.reduce.back().bytes_per_s, "32 MiB a rank reduce-scatters through the trainer's MPI Comm over its bytes per rank, beyond the all-gather's time");
  hw["intra_node"]["core_seconds_per_byte"] = fig(m.comm_core.per_byte, kCommCoreHow);
  hw["intra_node"]["core_seconds_per_call"] = fig(m.comm_core.per_call, kCommCallHow);
  for (const ActivationSeconds& a : m.activations) {
    const std::string how = " through Ops on 256 x 256 (cache-resident): seconds per element, per core";
    hw["activation_element_seconds"][emb::activation_name(a.act)] = {
        {"forward", fig(a.forward_s, "act(x)" + how)}, {"backward", fig(a.backward_s, "dx += act'(x) dy" + how)}};
  }
  for (const ArithmeticSeconds& a : m.elementwise) {
    if (!emb::probe::row_statistic_op(a.op)) {
      hw["elementwise_element_seconds"][a.op] =
          fig(a.element_s, a.op + " through Ops on 256 x 256 (cache-resident): seconds per element, per core");
      continue;
    }
    const std::string how = a.op + " through Ops on 4096 x 16 and 128 x 512, t(w) = e + r / w solved from the two: ";
    hw["elementwise_element_seconds"][a.op] = fig(a.element_s, how + "e, seconds per element, per core");
    hw["elementwise_row_seconds"][a.op] = fig(a.row_s, how + "r, seconds per row, per core");
  }
  hw.update(imbalance_figures(fig, m.imbalance));
  // How gemm_shape_efficiency times every set: its sources' common tail.
  const std::string shape_sets = "operands rotated over twice the private cache, interleaved, thread CPU time";
  for (const auto& [width, ratio] : m.gemm_shapes.widths)
    hw["gemm_width_efficiency"][std::to_string(width)] =
        fig(ratio, "linear fwd+bwd at the trunk shapes of width " + std::to_string(width) +
                       " (F 4x) over width 256's, 512 rows, " + shape_sets + ", per core");
  hw["gemm_call_rows"] =
      fig(m.gemm_shapes.call_rows, "linear fwd+bwd at the width-64 trunk shapes on 16 and on 64 rows, " + shape_sets +
                                       ": the rows a call's set-up costs (a call on M rows as long as M + it at one "
                                       "rate), per core");
  for (const auto& [n, ratio] : m.gemm_shapes.narrow)
    hw["gemm_narrow_efficiency"][std::to_string(n)] =
        fig(ratio, "linear fwd+bwd of " + std::to_string(n) + " -> 64 and 64 -> " + std::to_string(n) +
                       " features on 128 rows over the width-256 trunk shapes on 512 rows, " + shape_sets + ", per core");
  hw["fixed_costs"] = {
      {"op_call_s", fig(m.op_call, "host seconds per Ops call of a tiny op (add on [1, 8]), every rank at once")},
      {"allocation_s", fig(m.allocation, "seconds per host heap allocation, 32 B to 1 KiB each written once (the step's mix of sizes), every rank at once")},
      {"noise_draw_s", fig(m.noise_draw, "host seconds per N(0, 1) draw of the flow-matching noise (CounterRng::normals in runs of 64), every rank at once")},
      {"sync_s", fig(m.sync, "a blocking host sum of 4 doubles (train_step's), ranks entering together")}};
  return hw;
}

// On a GPU: `gpu_file` (a GPU hardware file) printed with its fixed_costs' launch figures
// measured here, the rest as it was. Under the CUDA emulation they time the host, not a GPU:
// stderr says so and nothing is printed that could become a GPU file.
int probe_launches(const char* gpu_file) {
  if (!emb::cuda_backend_built()) {
    std::fprintf(stderr, "hwprobe --launch: this build has no CUDA backend (configure with EMBTRAIN_CUDA=ON)\n");
    return 2;
  }
  std::ifstream in(gpu_file ? gpu_file : "");
  if (!in) {
    std::fprintf(stderr, "hwprobe --launch: give the GPU's hardware file to update (hwprobe --launch inputs/hw/h200.json)\n");
    return 2;
  }
  nlohmann::json hw = nlohmann::json::parse(in);
  emb::BackendConfig cfg;
  cfg.device = emb::Device::cuda;
  cfg.cuda_graphs = true;
  const std::unique_ptr<emb::Ops> ops = emb::make_ops(cfg, 0);
  const emb::probe::LaunchCosts c = emb::probe::launch_costs(*ops);
  if (emb::gpu_compute_capability(*ops) < 0) {
    std::fprintf(stderr, "hwprobe --launch: emulated, not a GPU figure: %.3g s per kernel launch, %.3g s per graph node\n",
                 c.kernel_launch_s, c.graph_kernel_launch_s);
    return 3;
  }
  const Figures fig{"measured by `hwprobe --launch` (tools/hwprobe), "};
  hw["fixed_costs"]["kernel_launch_s"] = fig(c.kernel_launch_s, "256 tiny kernels (zero on [1, 8]) through Ops back to back, to completion, per kernel");
  hw["fixed_costs"]["graph_kernel_launch_s"] = fig(c.graph_kernel_launch_s, "the same 256 captured as a CUDA graph and replayed (capture, update, launch), per node");
  std::printf("%s\n", hw.dump(2).c_str());
  return 0;
}

// --imbalance: the ranks' imbalance at this rank count, and with ranks sharing cores (e.g. two a
// core) their collectives too (time_sharing_link: the hops wait for the partners' turns and the
// sums share the core, so the rank-per-core figures do not carry over), the sums' floor on the
// memory bandwidth the ranks see at this count, and the core seconds the collectives take from
// the partners' compute (a machine of one core has no rank-per-core figure for it). Given a
// hardware file (`base`, read by every rank before measuring, so a bad path fails them all at
// once): that file with these figures in place of its own, ready for --plan at this rank count.
nlohmann::json imbalance_file(const emb::World& world, const Figures& fig, const char* base) {
  nlohmann::json out = nlohmann::json::object();
  if (base) {
    std::ifstream in(base);
    if (!in)
      throw emb::Error(emb::str(base, ": cannot open the hardware file to put the imbalance in (mpirun -np RANKS hwprobe --imbalance inputs/hw/NAME.json)"),
                       emb::kExitInput);
    try {
      out = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw emb::Error(emb::str(base, ": not valid JSON: ", e.what()), emb::kExitInput);
    }
    out.erase("time_sharing_link");  // measured at another rank count
  }
  const bool time_sharing = ranks_per_core(world) > 1;
  ImbalanceProbe probe(world);  // its blocks around the collectives' measurements, if any
  probe.measure_block();
  if (time_sharing) out["time_sharing_link"] = link_figures(fig, collectives(world, triad_bandwidth()));
  probe.measure_block();
  if (time_sharing) {
    const CommCore core = comm_core_seconds(world);
    out["time_sharing_link"]["core_seconds_per_byte"] = fig(core.per_byte, kCommCoreHow);
    out["time_sharing_link"]["core_seconds_per_call"] = fig(core.per_call, kCommCallHow);
  }
  probe.measure_block();
  probe.measure_block();
  out.update(imbalance_figures(fig, probe.result()));
  return out;
}

// NAME: a hardware file of every figure; --imbalance [FILE]: what depends on the rank count
// (alone, or put into FILE).
int probe(const emb::World& world, const std::string& name, const char* base) {
  g_rank = world.rank;
  g_size = world.size;
  const Figures fig{"measured by `mpirun -np " + std::to_string(g_size) + " hwprobe` (tools/hwprobe), "};
  try {
    const nlohmann::json out =
        name == "--imbalance" ? imbalance_file(world, fig, base) : hardware_file(name, fig, measure(world));
    if (g_rank == 0) std::printf("%s\n", out.dump(2).c_str());
    return 0;
  } catch (const emb::Error& e) {  // every rank read the same file: each fails, none waits
    if (g_rank == 0) std::fprintf(stderr, "hwprobe: error: %s\n", e.what());
    return e.exit_code();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--launch") return probe_launches(argc > 2 ? argv[2] : nullptr);
  return emb::run_in_world("hwprobe", &argc, &argv,
                           [&](const emb::World& world) {
                             return probe(world, argc > 1 ? argv[1] : "cpu", argc > 2 ? argv[2] : nullptr);
                           });
}
