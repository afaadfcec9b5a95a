// bench_comm_overlap: how much of a large all-reduce hides behind compute when the progress
// thread runs it against a modelled fabric (comm_fabric.hpp), plus the real MPI all-reduce
// bandwidth without the model. Every figure is the median over repetitions of the slowest
// rank's time. Writes outputs/bench/comm_overlap.json (rank 0).
//   mpirun -np 2 build/tests/comm/bench_comm_overlap [--alpha-us 20] [--gbps 12.5] [--mib 64]
#include <cblas.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "comm/comm_fabric.hpp"
#include "comm/comm_factory.hpp"
#include "core/error.hpp"

using namespace emb;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Median over `reps` of the slowest rank's time for `body` (ranks start together).
double median_seconds(const World& w, int reps, const std::function<void()>& prepare,
                      const std::function<void()>& body) {
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    prepare();
    MPI_Barrier(w.comm);
    const Clock::time_point t0 = Clock::now();
    body();
    double t = since(t0), slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, w.comm);
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Gemm {
  static constexpr int kDim = 512;
  std::vector<float> a = std::vector<float>(kDim * kDim, 0.5f), b = a, c = a;
  void run(int count) {
    for (int i = 0; i < count; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kDim, kDim, kDim, 1.0f, a.data(), kDim,
                  b.data(), kDim, 0.0f, c.data(), kDim);
  }
};

void write_json(const std::string& path, const nlohmann::json& j) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    EMB_CHECK(out, tmp, ": cannot open for writing");
    out << j.dump(2) << "\n";
    EMB_CHECK(out.good(), tmp, ": write failed");
  }
  std::filesystem::rename(tmp, path);
}

int run(const World& w, int argc, char** argv) {
  CLI::App app{"all-reduce / compute overlap with a modelled fabric"};
  double alpha_us = 20, gbps = 12.5;
  int mib = 64, reps = 7;
  std::string out_path = "outputs/bench/comm_overlap.json";
  app.add_option("--alpha-us", alpha_us, "fabric latency per collective (us)");
  app.add_option("--gbps", gbps, "fabric bandwidth (GB/s)");
  app.add_option("--mib", mib, "all-reduce size (MiB of fp32)");
  app.add_option("--reps", reps, "repetitions (median reported)");
  app.add_option("--out", out_path, "JSON output");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  const int64_t n = int64_t(mib) << 18;  // fp32 elements
  std::vector<float> x(n, 1.0f);
  auto refill = [&] { std::fill(x.begin(), x.end(), 1.0f); };
  bool correct = true;
  auto all_reduce = [&](Comm& comm) {
    comm.all_reduce(x.data(), n, DType::f32, ReduceOp::sum).wait();
  };
  auto check = [&] { correct = correct && x[0] == float(w.size) && x[n - 1] == float(w.size); };

  auto real = make_comm(w, {CommBackend::mpi});
  all_reduce(*real);  // first touch of MPI's temporaries
  const double t_real = median_seconds(w, reps, refill, [&] { all_reduce(*real); });
  check();

  const FabricModel model{alpha_us, gbps};
  auto fabric = make_comm(w, {CommBackend::mpi, CommProgress::thread, alpha_us, gbps});
  const double t_comm = median_seconds(w, reps, refill, [&] { all_reduce(*fabric); });
  check();

  // A compute kernel as long as the modelled all-reduce; rank 0's count so ranks agree.
  Gemm gemm;
  gemm.run(1);
  const Clock::time_point g0 = Clock::now();
  gemm.run(4);
  int gemms = std::max(1, int(t_comm / (since(g0) / 4) + 0.5));
  MPI_Bcast(&gemms, 1, MPI_INT, 0, w.comm);
  const double t_compute = median_seconds(w, reps, [] {}, [&] { gemm.run(gemms); });

  const double t_both = median_seconds(w, reps, refill, [&] {
    CommHandle h = fabric->all_reduce(x.data(), n, DType::f32, ReduceOp::sum);
    gemm.run(gemms);
    h.wait();
  });
  check();
  int all_correct = correct, everywhere = 0;
  MPI_Allreduce(&all_correct, &everywhere, 1, MPI_INT, MPI_MIN, w.comm);
  EMB_CHECK(everywhere, "bench_comm_overlap: all-reduce result is wrong");

  const double bytes = double(n) * 4;
  Collective c;
  c.kind = CollectiveKind::all_reduce;
  c.n = n;
  const double hidden = (t_comm + t_compute - t_both) / std::min(t_comm, t_compute);
  if (w.rank == 0) {
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    nlohmann::json j = {
        {"ranks", w.size},
        {"bytes", bytes},
        {"reps", reps},
        {"fabric_latency_us", alpha_us},
        {"fabric_gbps", gbps},
        {"modelled_all_reduce_s", model.seconds(c, w.size)},
        {"model_dominates", model.seconds(c, w.size) > t_real},
        {"comm_alone_s", t_comm},
        {"compute_alone_s", t_compute},
        {"both_overlapped_s", t_both},
        {"fraction_hidden", hidden},
        {"compute_kernel", "OpenBLAS sgemm 512^3 x " + std::to_string(gemms)},
        {"openblas_coretype", coretype ? coretype : "auto"},
        {"real_mpi_all_reduce_s", t_real},
        {"real_mpi_algbw_gbps", bytes / t_real / 1e9},
        {"real_mpi_busbw_gbps", FabricModel::bytes_per_rank(c, w.size) / t_real / 1e9},
    };
    write_json(out_path, j);
    std::cout << j.dump(2) << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  World w = init_world(&argc, &argv);
  try {
    const int rc = run(w, argc, argv);
    finalize_world();
    return rc;
  } catch (const emb::Error& e) {
    std::cerr << e.what() << std::endl;
    abort_world(e.exit_code());
  }
}
