// Data-path benchmark (not a test). Modes, each printing one JSON object on stdout:
//   bench_data_loader raw FILE                     sequential read() of FILE (page cache)
//   mpirun -np N bench_data_loader loader FILE     two epochs through the Loader, packed and padded
//   bench_data_loader video FILE                   single-thread decode frames/s
// tests/data/run_data_bench.sh runs them all and writes outputs/bench/data_loader.json.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "data/loader.hpp"
#include "video_decoder.hpp"

using namespace emb;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The median of 5 passes after one that warms the page cache (the machine is shared and
// single passes vary several-fold).
void raw(const std::string& path) {
  std::vector<char> block(8 << 20);
  std::vector<double> times;
  int64_t bytes = 0;
  for (int pass = 0; pass < 6; ++pass) {
    int fd = open(path.c_str(), O_RDONLY);
    auto t = Clock::now();
    bytes = 0;
    ssize_t n;
    while ((n = read(fd, block.data(), block.size())) > 0) bytes += n;
    if (pass > 0) times.push_back(seconds_since(t));
    close(fd);
  }
  std::sort(times.begin(), times.end());
  double s = times[times.size() / 2];
  std::printf("{\"bytes\": %lld, \"seconds\": %.4f, \"MB_per_s\": %.1f, \"passes\": 5, \"statistic\": \"median\"}\n",
              (long long)bytes, s, bytes / s / 1e6);
}

ModelConfig bench_model() {
  ModelConfig c;
  c.family = Family::gr00t;
  c.d_ctx = 128, c.n_embodiments = 3, c.state_dim = 16, c.action_dim = 8, c.horizon = 16, c.n_future = 8;
  return c;
}

// One epoch's figures over all ranks: end to end (samples/s, file MB/s) and the read path
// alone (shuffle-buffer reads + feature exchange, the slowest rank's time).
std::string epoch_json(const LoaderStats& before, const LoaderStats& after, double seconds) {
  int64_t mine[4] = {after.samples - before.samples, after.real_tokens - before.real_tokens,
                     after.computed_tokens - before.computed_tokens, after.buffer_bytes - before.buffer_bytes};
  int64_t sum[4];
  MPI_Allreduce(mine, sum, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  double read = after.read_seconds - before.read_seconds, slowest = 0;
  MPI_Allreduce(&read, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double file_bytes = double(mine[3]);  // every rank loads the same buffers
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"seconds\": %.3f, \"samples_per_s\": %.0f, \"file_MB_per_s\": %.1f, \"read_seconds\": %.4f, "
                "\"read_MB_per_s\": %.1f, \"real_tokens\": %lld, \"computed_tokens\": %lld, \"efficiency\": %.4f}",
                seconds, sum[0] / seconds, file_bytes / seconds / 1e6, slowest, file_bytes / slowest / 1e6,
                (long long)sum[1], (long long)sum[2], double(sum[1]) / double(sum[2]));
  return buf;
}

// Two epochs per packing mode in one Loader: the first includes first-touching the reused
// buffers, the second is the steady state of a long run.
void loader(const std::string& path) {
  int provided, rank, ranks;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  DataConfig dc;
  dc.paths = {path};
  dc.global_batch = 512, dc.tokens_per_mb = 8192, dc.shuffle_buffer = 8192, dc.chunk_rows = 256, dc.prefetch = 2;
  std::string json = "{\"ranks\": " + std::to_string(ranks);
  for (bool packing : {true, false}) {
    dc.packing = packing;
    Loader l(MPI_COMM_WORLD, dc, bench_model());
    int64_t steps = l.samples_per_epoch() / dc.global_batch;
    json += std::string(", \"") + (packing ? "packed" : "padded") + "\": {\"steps_per_epoch\": " + std::to_string(steps);
    for (const char* name : {"first_epoch", "warm_epoch"}) {
      MPI_Barrier(MPI_COMM_WORLD);
      LoaderStats before = l.stats();
      auto t = Clock::now();
      for (int64_t k = 0; k < steps; ++k) l.next_step();
      MPI_Barrier(MPI_COMM_WORLD);
      json += std::string(", \"") + name + "\": " + epoch_json(before, l.stats(), seconds_since(t));
    }
    json += "}";
  }
  if (rank == 0) std::printf("%s}\n", json.c_str());
  MPI_Finalize();
}

void video(const std::string& path) {
  auto t = Clock::now();
  VideoInfo info = decode_video(path, 224, 224, 1, [](int64_t, const uint8_t*) {});
  double s = seconds_since(t);
  std::printf("{\"frames\": %lld, \"source\": \"%dx%d\", \"seconds\": %.3f, \"frames_per_s_per_core\": %.0f}\n",
              (long long)info.frames, info.src_width, info.src_height, s, info.frames / s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_data_loader raw|loader|video FILE\n");
    return 2;
  }
  std::string mode = argv[1];
  try {
    if (mode == "raw") raw(argv[2]);
    if (mode == "loader") loader(argv[2]);
    if (mode == "video") video(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_data_loader: %s\n", e.what());
    return 1;
  }
  return 0;
}
