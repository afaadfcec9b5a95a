// Data-path benchmark (not a test). Modes, each printing one JSON object on stdout:
//   bench_data_loader raw FILE                     sequential read() of FILE (page cache)
//   mpirun -np N bench_data_loader loader FILE     one epoch through the Loader, packed and padded
//   bench_data_loader video FILE                   single-thread decode frames/s
// tests/data/run_data_bench.sh runs them all and writes outputs/bench/data_loader.json.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

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

void raw(const std::string& path) {
  std::vector<char> block(8 << 20);
  for (int pass = 0; pass < 2; ++pass) {  // first pass warms the page cache
    int fd = open(path.c_str(), O_RDONLY);
    auto t = Clock::now();
    int64_t bytes = 0;
    ssize_t n;
    while ((n = read(fd, block.data(), block.size())) > 0) bytes += n;
    double s = seconds_since(t);
    close(fd);
    if (pass == 1) std::printf("{\"bytes\": %lld, \"seconds\": %.4f, \"MB_per_s\": %.1f}\n", (long long)bytes, s, bytes / s / 1e6);
  }
}

ModelConfig bench_model() {
  ModelConfig c;
  c.family = Family::gr00t;
  c.d_ctx = 128, c.n_embodiments = 3, c.state_dim = 16, c.action_dim = 8, c.horizon = 16, c.n_future = 8;
  return c;
}

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
    MPI_Barrier(MPI_COMM_WORLD);
    auto t = Clock::now();
    LoaderStats st;
    int64_t steps = 0;
    {
      Loader l(MPI_COMM_WORLD, dc, bench_model());
      steps = l.samples_per_epoch() / dc.global_batch;
      for (int64_t k = 0; k < steps; ++k) l.next_step();
      st = l.stats();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double s = seconds_since(t);
    int64_t samples = 0, real = 0, computed = 0;
    MPI_Reduce(&st.samples, &samples, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&st.real_tokens, &real, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&st.computed_tokens, &computed, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  ", \"%s\": {\"steps\": %lld, \"seconds\": %.3f, \"samples_per_s\": %.0f, \"file_MB_per_s\": %.1f, "
                  "\"real_tokens\": %lld, \"computed_tokens\": %lld, \"efficiency\": %.4f}",
                  packing ? "packed" : "padded", (long long)steps, s, samples / s, st.bytes_read / s / 1e6,
                  (long long)real, (long long)computed, double(real) / double(computed));
    json += buf;
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
