// Data-path benchmark (not a test). Modes, each printing one JSON object on stdout:
//   bench_data_loader raw FILE                     sequential read() of FILE (page cache)
//   mpirun -np N bench_data_loader loader FILE [independent|collective]
//                                                  epochs through the Loader, packed and padded,
//                                                  each warm one next to a raw read of FILE
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

#include "core/error.hpp"
#include "data/loader.hpp"
#include "video_decoder.hpp"

using namespace emb;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Seconds of one sequential read() of the whole file in 8 MiB requests into `dest`, front to
// back and around again when the file is larger.
double read_file_once(const std::string& path, std::vector<char>& dest, int64_t* bytes) {
  int fd = open(path.c_str(), O_RDONLY);
  EMB_CHECK(fd >= 0, path, ": cannot open");
  const size_t request = std::min<size_t>(8 << 20, dest.size());
  auto t = Clock::now();
  *bytes = 0;
  ssize_t n;
  for (size_t at = 0; (n = read(fd, dest.data() + at, std::min(request, dest.size() - at))) > 0;) {
    *bytes += n;
    at = (at + size_t(n)) % dest.size();
  }
  double s = seconds_since(t);
  close(fd);
  return s;
}

// The median of 5 passes after one that warms the page cache (the machine is shared and
// single passes vary several-fold).
void raw(const std::string& path) {
  std::vector<char> block(8 << 20);
  std::vector<double> times;
  int64_t bytes = 0;
  for (int pass = 0; pass < 6; ++pass) {
    double s = read_file_once(path, block, &bytes);
    if (pass > 0) times.push_back(s);
  }
  std::sort(times.begin(), times.end());
  double s = times[times.size() / 2];
  std::printf("{\"bytes\": %lld, \"seconds\": %.4f, \"MB_per_s\": %.1f, \"passes\": 5, \"statistic\": \"median\"}\n",
              (long long)bytes, s, bytes / s / 1e6);
}

// The raw baselines next to a loader epoch, each the best of 3 passes (the loader's figure is
// also a best case: warm page cache, reused buffers):
//   single     rank 0 reads the whole file sequentially through one 8 MiB buffer while the
//              others sleep (a blocking MPI wait would spin and take a core from it): the
//              issue-5 reference. The buffer stays in the last-level cache (32 MiB here);
//   kept       the same into a 64 MiB buffer, about one shuffle buffer: what any reader that
//              keeps the bytes (in memory, not cache) can reach; measured ~25 % below single;
//   all_ranks  every rank reads its 1/N of the file at once through 8 MiB, timed by the
//              slowest: what N readers can draw from the page cache of this machine together.
struct RawBaseline {
  double single = 0, kept = 0, all_ranks = 0;  // MB/s
};

RawBaseline raw_baselines_now(const std::string& path) {
  RawBaseline raw;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<char> block(8 << 20);
  int64_t bytes = 0;
  if (rank == 0) {
    std::vector<char> kept(64 << 20, 1);
    for (int pass = 0; pass < 3; ++pass) {
      raw.single = std::max(raw.single, bytes / read_file_once(path, block, &bytes) / 1e6);
      raw.kept = std::max(raw.kept, bytes / read_file_once(path, kept, &bytes) / 1e6);
    }
  }
  double single_and_kept[2] = {raw.single, raw.kept};
  MPI_Request done;
  MPI_Ibcast(single_and_kept, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD, &done);
  for (int finished = 0; !finished; usleep(1000)) MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
  raw.single = single_and_kept[0], raw.kept = single_and_kept[1];
  int fd = open(path.c_str(), O_RDONLY);
  EMB_CHECK(fd >= 0, path, ": cannot open");
  const int64_t size = lseek(fd, 0, SEEK_END), begin = size * rank / ranks, end = size * (rank + 1) / ranks;
  for (int pass = 0; pass < 3; ++pass) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto t = Clock::now();
    for (int64_t at = begin; at < end;) {
      ssize_t n = pread(fd, block.data(), size_t(std::min<int64_t>(int64_t(block.size()), end - at)), at);
      EMB_CHECK(n > 0, path, ": read failed");
      at += n;
    }
    double mine = seconds_since(t), slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    raw.all_ranks = std::max(raw.all_ranks, size / slowest / 1e6);
  }
  close(fd);
  return raw;
}

ModelConfig bench_model() {
  ModelConfig c;
  c.family = Family::gr00t;
  c.d_ctx = 128, c.n_embodiments = 3, c.state_dim = 16, c.action_dim = 8, c.horizon = 16, c.n_future = 8;
  return c;
}

// One epoch's figures over all ranks: end to end (samples/s, file MB/s) and the read path
// alone (shuffle-buffer reads + feature exchange, the slowest rank's time), against the raw
// baselines (MB/s, 0: not measured).
std::string epoch_json(const LoaderStats& before, const LoaderStats& after, double seconds, const RawBaseline& raw,
                       double* read_vs_raw, double* read_vs_raw_kept, double* read_vs_raw_all_ranks) {
  int64_t mine[4] = {after.samples - before.samples, after.real_tokens - before.real_tokens,
                     after.computed_tokens - before.computed_tokens, after.buffer_bytes - before.buffer_bytes};
  int64_t sum[4];
  MPI_Allreduce(mine, sum, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  double read = after.read_seconds - before.read_seconds, slowest = 0;
  MPI_Allreduce(&read, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double file_bytes = double(mine[3]);  // every rank loads the same buffers
  double read_mb_per_s = file_bytes / slowest / 1e6;
  *read_vs_raw = raw.single > 0 ? read_mb_per_s / raw.single : 0;
  *read_vs_raw_kept = raw.kept > 0 ? read_mb_per_s / raw.kept : 0;
  *read_vs_raw_all_ranks = raw.all_ranks > 0 ? read_mb_per_s / raw.all_ranks : 0;
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "{\"seconds\": %.3f, \"samples_per_s\": %.0f, \"file_MB_per_s\": %.1f, \"read_seconds\": %.4f, "
                "\"read_MB_per_s\": %.1f, \"raw_MB_per_s\": %.1f, \"read_vs_raw\": %.3f, "
                "\"raw_kept_MB_per_s\": %.1f, \"read_vs_raw_kept\": %.3f, "
                "\"raw_all_ranks_MB_per_s\": %.1f, \"read_vs_raw_all_ranks\": %.3f, \"real_tokens\": %lld, "
                "\"computed_tokens\": %lld, \"efficiency\": %.4f}",
                seconds, sum[0] / seconds, file_bytes / seconds / 1e6, slowest, read_mb_per_s, raw.single, *read_vs_raw,
                raw.kept, *read_vs_raw_kept, raw.all_ranks, *read_vs_raw_all_ranks,
                (long long)sum[1],
                (long long)sum[2], double(sum[1]) / double(sum[2]));
  return buf;
}

// Per packing mode one Loader: a first epoch (first-touching the reused buffers), then warm
// epochs, the steady state of a long run, each right after a raw read of the same file so
// both see the same machine state; the median warm ratio is the issue-5 figure.
void loader(const std::string& path, MpioTransfer transfer) {
  int provided, rank, ranks;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  DataConfig dc;
  dc.paths = {path};
  dc.global_batch = 512, dc.tokens_per_mb = 8192, dc.shuffle_buffer = 8192, dc.chunk_rows = 256, dc.prefetch = 2;
  dc.mpio_transfer = transfer;
  const int warm_epochs = 5;
  std::string json = "{\"ranks\": " + std::to_string(ranks) + ", \"mpio_transfer\": \"" +
                     (transfer == MpioTransfer::collective ? "collective" : "independent") + "\"";
  for (bool packing : {true, false}) {
    dc.packing = packing;
    Loader l(MPI_COMM_WORLD, dc, bench_model());
    int64_t steps = l.samples_per_epoch() / dc.global_batch;
    json += std::string(", \"") + (packing ? "packed" : "padded") + "\": {\"steps_per_epoch\": " + std::to_string(steps);
    std::vector<double> ratios, ratios_kept, ratios_all_ranks;
    for (int epoch = 0; epoch <= warm_epochs; ++epoch) {
      RawBaseline raw = epoch == 0 ? RawBaseline{} : raw_baselines_now(path);
      double ratio = 0, ratio_kept = 0, ratio_all_ranks = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      LoaderStats before = l.stats();
      auto t = Clock::now();
      for (int64_t k = 0; k < steps; ++k) l.next_step();
      MPI_Barrier(MPI_COMM_WORLD);
      std::string e = epoch_json(before, l.stats(), seconds_since(t), raw, &ratio, &ratio_kept, &ratio_all_ranks);
      json += epoch == 0 ? ", \"first_epoch\": " + e + ", \"warm_epochs\": [" : (epoch > 1 ? ", " : "") + e;
      if (epoch > 0) ratios.push_back(ratio), ratios_kept.push_back(ratio_kept), ratios_all_ranks.push_back(ratio_all_ranks);
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    json += "], \"warm_read_vs_raw_median\": " + std::to_string(median(ratios)) +
            ", \"warm_read_vs_raw_kept_median\": " + std::to_string(median(ratios_kept)) +
            ", \"warm_read_vs_raw_all_ranks_median\": " + std::to_string(median(ratios_all_ranks)) + "}";
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
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: bench_data_loader raw|loader|video FILE [independent|collective]\n");
    return 2;
  }
  std::string mode = argv[1];
  try {
    if (mode == "raw") raw(argv[2]);
    if (mode == "loader") loader(argv[2], mpio_transfer_from_name(argc == 4 ? argv[3] : "independent"));
    if (mode == "video") video(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_data_loader: %s\n", e.what());
    return 1;
  }
  return 0;
}
