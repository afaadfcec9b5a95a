// Keeps `depth` loaded steps ready on a background thread, which does all the data work of
// the process (HDF5 is not thread-safe, and collective MPI-IO needs every rank to issue the
// same reads in the same order, so exactly one thread per rank reads). The producer only
// stops with a full queue: since every rank consumes the same number of steps, every rank's
// producer has then made the same collective calls, and shutdown never leaves a rank
// waiting in a collective. depth 0 produces on demand in the consumer's thread.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "data/sampler.hpp"
#include "batch/packed_batch.hpp"

namespace emb {

struct LoadedStep {
  std::vector<PackedBatch> batches;  // this rank's micro-batches
  SamplerState after;                // sampler state once this step is consumed
  int64_t samples = 0, real_tokens = 0, computed_tokens = 0;
};

class Prefetcher {
 public:
  Prefetcher(std::function<LoadedStep()> produce, int depth);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // The next step; *waited gets the seconds spent blocked (the data_wait phase). A failure
  // in the producer is rethrown here.
  LoadedStep pop(double* waited);
  // Returns once the producer is idle (queue full): HDF5 may then be used by this thread
  // until the next pop().
  void quiesce();

 private:
  void run();
  std::function<LoadedStep()> produce_;
  size_t depth_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<LoadedStep> queue_;
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace emb
