// How every waiting loop of RL waits: ranks of all three groups share few cores (on this
// machine 2 cores for up to 4 ranks), so a rank with nothing to do must sleep, not spin, or
// it steals the core of the rank it is waiting for. MPI has no progress thread here
// (MACHINE.md), so a loop still has to poll: it sleeps a short, growing interval between polls.
#pragma once
#include <chrono>

namespace emb {

class Backoff {
 public:
  // Sleeps 50 µs the first time, doubling up to 200 µs: a reply that comes at once is seen
  // at once, and a long wait costs at most 5000 wakeups a second.
  void wait();
  // After a poll that found work, the next wait is short again.
  void reset() { sleep_us_ = kFirstUs; }

 private:
  static constexpr int kFirstUs = 50;
  static constexpr int kLastUs = 200;
  int sleep_us_ = kFirstUs;
};

// The end of a timeout that started at construction.
class Deadline {
 public:
  explicit Deadline(double seconds)
      : end_(std::chrono::steady_clock::now() +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds))) {}
  bool passed() const { return std::chrono::steady_clock::now() >= end_; }

 private:
  std::chrono::steady_clock::time_point end_;
};

}  // namespace emb
