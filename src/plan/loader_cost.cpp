#include "plan/loader_cost.hpp"

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "data/loader.hpp"
#include "plan/data_files.hpp"
#include "train/trainer.hpp"

namespace emb {
namespace {

// The calling thread, and the threads it starts, on the core it runs on, while in scope: a
// CPU rank's binding (mpirun --bind-to core).
class OneCore {
 public:
  OneCore() {
    saved_ok_ = sched_getaffinity(0, sizeof(saved_), &saved_) == 0;
    const int core = sched_getcpu();
    if (!saved_ok_ || core < 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core, &one);
    sched_setaffinity(0, sizeof(one), &one);
  }
  ~OneCore() {
    if (saved_ok_) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  OneCore(const OneCore&) = delete;
  OneCore& operator=(const OneCore&) = delete;

 private:
  cpu_set_t saved_;
  bool saved_ok_ = false;
};

}  // namespace

LoaderTiming time_loader(const RunConfig& cfg, int ranks, int64_t dataset_samples) {
  constexpr int kWarmUp = 3, kTimed = 15;
  const std::vector<std::string> paths = present_data_files(cfg.data);
  if (paths.empty()) return {};
  DataConfig dc = loader_data_config(cfg);
  LoaderTiming t;
  t.samples = (dc.global_batch + ranks - 1) / std::max(1, ranks);
  // One process makes one rank's samples: a global batch of that share, or of kMostTimedSamples
  // scaled to it (the step's work is mostly per sample: tiny_gr00t's 16 samples took 0.08 ms,
  // its 32 0.14). The buffer's reads are not the loader's step but the storage's figure: taken out.
  constexpr int64_t kMostTimedSamples = 64;
  dc.global_batch = std::min(t.samples, kMostTimedSamples);
  const int64_t timed_samples = dc.global_batch * (kWarmUp + kTimed + dc.prefetch + 1);
  if (dataset_samples < timed_samples) return {};  // too few samples to time apart from the reads
  // The deck's shuffle buffer, up to kBufferBytes of the files: the samples are drawn from all of
  // it, and where it is larger than the caches their rows are read from memory (tiny_gr00t's
  // 32 samples took 0.08 ms from a buffer of the timed steps' 0.6k samples, 0.14 from its 6k).
  constexpr double kBufferBytes = 256.0 * (1 << 20);
  double file_bytes = 0;
  for (const std::string& path : paths) file_bytes += double(std::filesystem::file_size(path));
  const int64_t affordable = int64_t(kBufferBytes / std::max(1.0, file_bytes / double(dataset_samples)));
  dc.shuffle_buffer = std::max(timed_samples, std::min(dc.shuffle_buffer, affordable));
  const OneCore one_core;  // before the loader: its producer shares the core, as a bound rank's does
  Loader loader(MPI_COMM_SELF, dc, cfg.model);
  // Each take as in a run's step: the producer (the prefetch thread refilling the queue after the
  // step took its batch, or on demand the step's own thread) alone on the rank's core, with the
  // caches full of the step's data and the allocator as the step leaves it (here a stand-in's
  // 64 MiB taken, written and given back), the batches of the steps in flight (the queue's and
  // the one the step trains on) kept. Timed with warm
  // caches instead, the loader took 60 % of its time in a run (round 33).
  std::vector<std::vector<PackedBatch>> in_flight(size_t(dc.prefetch) + 1);
  std::vector<double> seconds;
  for (int i = 0; i < kWarmUp + kTimed; ++i) {
    std::vector<char> step_stand_in(size_t(64) << 20, char(i));
    const LoaderStats before = loader.stats();
    in_flight[size_t(i) % in_flight.size()] = loader.next_step();
    loader.quiesce();
    const LoaderStats after = loader.stats();
    if (i >= kWarmUp)
      seconds.push_back((after.produce_seconds - after.read_seconds) - (before.produce_seconds - before.read_seconds));
  }
  std::nth_element(seconds.begin(), seconds.begin() + kTimed / 2, seconds.end());
  t.step_s = seconds[size_t(kTimed / 2)] * double(t.samples) / double(dc.global_batch);
  t.steps = kTimed;
  return t;
}

}  // namespace emb
