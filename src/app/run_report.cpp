#include "app/run_report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "comm/host_collectives.hpp"
#include "core/arena.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/host_name.hpp"
#include "core/log.hpp"

namespace emb {
namespace {

struct MinMedMax {
  double min = 0, median = 0, max = 0, mean = 0;
};

MinMedMax stats_of(std::vector<double> values) {
  MinMedMax s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / double(n);
  return s;
}

nlohmann::json to_json(const MinMedMax& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}, {"mean", s.mean}};
}

// One rank's timings/rank<R>.csv (RunTrace): step,phase,seconds rows, in step order.
std::vector<StepTimes> read_rank_timings(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(str(path, ": missing (every rank writes its timings as it runs)"));
  std::vector<StepTimes> steps;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.rfind(',');
    if (a == std::string::npos || b == a) throw Error(str(path, ": malformed row '", line, "'"));
    const int64_t step = std::stoll(line.substr(0, a));
    const std::string phase = line.substr(a + 1, b - a - 1);
    if (steps.empty() || steps.back().step != step) steps.push_back(StepTimes{step, {}});
    for (int p = 0; p < kNumPhases; ++p)
      if (phase == phase_name(Phase(p))) steps.back().seconds[size_t(p)] = std::stod(line.substr(b + 1));
  }
  return steps;
}

// Every rank's memory peaks and CUDA graph counters, reduced to rank 0.
struct RankReductions {
  // Host: the process's peak resident size; device (0 on the CPU): the backend allocator's
  // peak, which holds the cuBLASLt workspace and the activations, plus NCCL's memory; then those parts.
  double peak_min[6], peak_max[6];
  // CUDA graphs, summed over ranks: micro-batches, spans captured, replays, nodes replayed,
  // launch seconds saved; then the largest rank's graphs and nodes.
  double graph_sums[5], graph_maxes[2];
};

RankReductions reduce_to_rank0(MPI_Comm comm, const RunTotals& totals) {
  RankReductions r;
  const double peaks[6] = {double(peak_rss_bytes()), double(totals.device_peak_bytes + totals.comm_device_bytes),
                           double(totals.device_peak_bytes), double(totals.blas_workspace_bytes),
                           double(totals.comm_device_bytes), double(totals.activation_device_bytes)};
  min_to_root(comm, peaks, r.peak_min, 6);
  max_to_root(comm, peaks, r.peak_max, 6);  // also: every rank flushed its last step
  const GraphStats& g = totals.graphs;
  const double sums[5] = {double(totals.micro_batches), double(g.captures), double(g.replays),
                          double(g.replayed_nodes), double(g.replayed_nodes) * g.launch_seconds};
  const double maxes[2] = {double(g.graphs), double(g.nodes)};
  std::copy(sums, sums + 5, r.graph_sums);
  std::copy(maxes, maxes + 2, r.graph_maxes);
  sum_to_root(comm, r.graph_sums, r.graph_sums, 5);
  max_to_root(comm, r.graph_maxes, r.graph_maxes, 2);
  return r;
}

// The phases in which a rank computes on its own, waiting for no other rank.
constexpr Phase kComputeParts[] = {Phase::backbone, Phase::encoders, Phase::fwd, Phase::bwd, Phase::optim};

// Each phase's seconds over (rank, step) and each rank's total; each rank's compute a step (the
// median over its steps of kComputeParts' sum) and its number of steps.
struct PhaseSeconds {
  std::vector<std::vector<double>> per_step = std::vector<std::vector<double>>(kNumPhases);
  std::vector<std::vector<double>> per_rank = std::vector<std::vector<double>>(kNumPhases);
  std::vector<double> rank_compute;
  int64_t steps = 0;
};

// timings.csv: every rank's timings/rankR.csv in one file; returns what it read.
PhaseSeconds merge_timings(const std::string& run_dir, int size) {
  PhaseSeconds t;
  std::ostringstream csv;
  csv << "rank,step,phase,seconds\n";
  for (int r = 0; r < size; ++r) {
    std::vector<double> rank_total(kNumPhases, 0.0), compute;
    for (const StepTimes& st : read_rank_timings(str(run_dir, "/timings/rank", r, ".csv"))) {
      for (int p = 0; p < kNumPhases; ++p) {
        const double s = st.seconds[size_t(p)];
        csv << r << ',' << st.step << ',' << phase_name(Phase(p)) << ',' << s << '\n';
        t.per_step[size_t(p)].push_back(s);
        rank_total[size_t(p)] += s;
      }
      if (st.seconds[size_t(Phase::step)] <= 0) continue;  // the row of the start (init)
      double c = 0;
      for (Phase p : kComputeParts) c += st.seconds[size_t(p)];
      compute.push_back(c);
    }
    for (int p = 0; p < kNumPhases; ++p) t.per_rank[size_t(p)].push_back(rank_total[size_t(p)]);
    t.rank_compute.push_back(stats_of(compute).median);
    t.steps = std::max(t.steps, int64_t(compute.size()));
  }
  write_file_atomic(run_dir + "/timings.csv", csv.str());
  return t;
}

// The ranks' compute a step against each other's: a straggler (a slower GPU or core, a loaded
// node) makes every other rank wait for it in each collective, where their phases show only the
// wait.
struct RankSpread {
  int fastest = 0, slowest = 0;
  double median = 0;       // the median rank's compute a step
  double over_median = 0;  // the slowest rank's over the median's, less 1
};

RankSpread rank_spread(const std::vector<double>& compute) {
  RankSpread s;
  s.fastest = int(std::min_element(compute.begin(), compute.end()) - compute.begin());
  s.slowest = int(std::max_element(compute.begin(), compute.end()) - compute.begin());
  s.median = stats_of(compute).median;
  s.over_median = s.median > 0 ? compute[size_t(s.slowest)] / s.median - 1 : 0.0;
  return s;
}

nlohmann::json rank_compute_json(const PhaseSeconds& t, const RankSpread& s, const std::vector<std::string>& hosts) {
  const auto rank = [&](int r) {
    return nlohmann::json{{"rank", r}, {"host", hosts[size_t(r)]}, {"seconds", t.rank_compute[size_t(r)]}};
  };
  nlohmann::json slowest = rank(s.slowest);
  slowest["over_median"] = s.over_median;
  return {{"per_rank", t.rank_compute}, {"median", s.median}, {"fastest", rank(s.fastest)}, {"slowest", slowest}};
}

// The run's last lines: where a step's time went (the ranks' and steps' mean of each part, which
// sum to the step), and with several ranks how far apart their compute was.
void log_where_time_went(const PhaseSeconds& t, const RankSpread& s, const std::vector<std::string>& hosts) {
  if (t.steps == 0) return;
  const auto ms_per_step = [&](Phase p) { return 1e3 * stats_of(t.per_rank[size_t(p)]).mean / double(t.steps); };
  char part[96];
  std::string parts;
  for (Phase p : kStepParts) {
    const double ms = ms_per_step(p);
    if (ms < 0.005) continue;
    std::snprintf(part, sizeof part, "%s%s %.2f", parts.empty() ? "" : " + ", phase_name(p), ms);
    parts += part;
  }
  char line[160];
  std::snprintf(line, sizeof line, "%.2f ms = ", ms_per_step(Phase::step));
  log_info("time per step (mean over ranks and steps): ", line, parts, " ms");
  if (t.rank_compute.size() < 2) return;
  std::snprintf(line, sizeof line, "median %.2f ms; slowest rank %d on %s %.2f ms (%+.1f %%); fastest rank %d %.2f ms",
                1e3 * s.median, s.slowest, hosts[size_t(s.slowest)].c_str(), 1e3 * t.rank_compute[size_t(s.slowest)],
                100 * s.over_median, s.fastest, 1e3 * t.rank_compute[size_t(s.fastest)]);
  log_info("ranks' compute per step (fwd + bwd + optim, each rank's median): ", line);
}

nlohmann::json summary_json(const RunTotals& totals, int size, const RankReductions& r, const PhaseSeconds& t,
                            const RankSpread& spread, const std::vector<std::string>& hosts) {
  nlohmann::json phases;
  for (int p = 0; p < kNumPhases; ++p)
    phases[phase_name(Phase(p))] = {{"per_step", to_json(stats_of(t.per_step[size_t(p)]))},
                                    {"rank_total", to_json(stats_of(t.per_rank[size_t(p)]))}};
  // Throughput is bounded by the slowest rank's wall time in steps.
  double step_seconds = stats_of(t.per_rank[size_t(Phase::step)]).max;
  double comm_total = stats_of(t.per_rank[size_t(Phase::comm_total)]).median;
  double comm_exposed = stats_of(t.per_rank[size_t(Phase::comm_exposed)]).median;
  auto rate = [&](double amount) { return step_seconds > 0 ? amount / step_seconds : 0.0; };
  const double* peak_min = r.peak_min;
  const double* peak_max = r.peak_max;
  const double* graph_sums = r.graph_sums;
  return {
      {"ranks", size},
      {"steps", totals.steps},
      {"family", totals.family},
      {"preset", totals.preset},
      {"device", totals.device},
      {"samples", totals.samples},
      {"tokens", totals.tokens},
      {"computed_tokens", totals.computed_tokens},
      {"step_seconds_total", step_seconds},
      {"samples_per_s", rate(double(totals.samples))},
      {"tokens_per_s", rate(double(totals.tokens))},
      {"model_flops_per_sample", totals.flops_per_sample},
      {"achieved_tflops_per_rank", rate(double(totals.samples) * totals.flops_per_sample) / size / 1e12},
      {"peak_tflops_per_rank", totals.peak_flops_per_rank / 1e12},
      {"mfu", totals.peak_flops_per_rank > 0
                  ? rate(double(totals.samples) * totals.flops_per_sample) / size / totals.peak_flops_per_rank
                  : 0.0},
      {"comm_exposed_fraction", comm_total > 0 ? comm_exposed / comm_total : 0.0},
      {"final_loss", totals.final_loss},
      {"peak_memory_bytes", {{"min", peak_min[0]}, {"max", peak_max[0]}}},
      {"device_peak_memory_bytes", {{"min", peak_min[1]}, {"max", peak_max[1]}}},
      {"device_memory_bytes",
       {{"allocator_peak", {{"min", peak_min[2]}, {"max", peak_max[2]}}},
        {"blas_workspace", peak_max[3]},
        {"nccl", {{"min", peak_min[4]}, {"max", peak_max[4]}}},
        {"activations", {{"min", peak_min[5]}, {"max", peak_max[5]}}}}},
      {"cuda_graphs",
       {{"micro_batches", int64_t(graph_sums[0])},
        {"captures", int64_t(graph_sums[1])},
        {"replays", int64_t(graph_sums[2])},
        {"hit_rate", graph_sums[1] > 0 ? graph_sums[2] / graph_sums[1] : 0.0},
        {"graphs", int64_t(r.graph_maxes[0])},
        {"nodes", int64_t(r.graph_maxes[1])},
        {"replayed_nodes", int64_t(graph_sums[3])},
        {"launch_seconds", totals.graphs.launch_seconds},
        {"launch_overhead_saved_s", graph_sums[4]}}},
      {"phases", phases},
      {"rank_compute", rank_compute_json(t, spread, hosts)},
  };
}

}  // namespace

void write_run_report(MPI_Comm comm, const std::string& run_dir, const RunTotals& totals) {
  const RankReductions reduced = reduce_to_rank0(comm, totals);
  const std::vector<std::string> hosts = gather_to_root(comm, host_name());
  if (rank_in(comm) != 0) return;
  const PhaseSeconds phases = merge_timings(run_dir, ranks_in(comm));
  const RankSpread spread = rank_spread(phases.rank_compute);
  write_file_atomic(run_dir + "/summary.json",
                    summary_json(totals, ranks_in(comm), reduced, phases, spread, hosts).dump(2) + "\n");
  log_where_time_went(phases, spread, hosts);
}

}  // namespace emb
