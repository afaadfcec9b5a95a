#include "app/watchdog.hpp"

#include <algorithm>
#include <cstdio>

#include "comm/world.hpp"
#include "core/error.hpp"

namespace emb {

Watchdog::Watchdog(int rank, int world_size, double setting_seconds)
    : rank_(rank), world_size_(world_size), setting_(setting_seconds) {
  if (setting_ < 0) return;
  if (world_size_ > 1) board_ = std::make_unique<ProgressBoard>(MPI_COMM_WORLD);
  thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::watch(const char* phase, int64_t step, const std::string& what, double min_seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  watching_ = true;
  phase_ = phase;
  step_ = step;
  what_ = what;
  min_seconds_ = min_seconds;
  since_ = PhaseTimers::Clock::now();
  if (board_) board_->post_wait(step, phase);
}

void Watchdog::step_done(double seconds, const StepTimes& times) {
  std::string text = str("previous step ", times.step, ":");
  for (int p = 0; p < kNumPhases; ++p)
    if (times.seconds[size_t(p)] > 0) text += str(" ", phase_name(Phase(p)), " ", times.seconds[size_t(p)], " s");
  std::lock_guard<std::mutex> lock(mutex_);
  longest_step_ = std::max(longest_step_, seconds);
  last_step_ = text;
}

void Watchdog::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  watching_ = false;
}

double Watchdog::deadline_locked() const {
  if (setting_ > 0) return setting_;
  return std::max({kWatchdogFloorSeconds, kWatchdogStepFactor * longest_step_, min_seconds_});
}

void Watchdog::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(100));
    if (board_) board_->heartbeat();
    if (stop_ || !watching_) continue;
    const double waited = seconds_since(since_), limit = deadline_locked();
    if (waited <= limit) continue;
    const std::string peers = board_ ? str("; waiting for ", board_->missing_peers()) : "";
    std::fprintf(stderr,
                 "embtrain: error on rank %d: watchdog: step %lld, phase %s has waited %.1f s for %s (over %d "
                 "rank(s))%s, deadline %.0f s (train.watchdog_s); %s; a rank is frozen or a file system or network "
                 "hangs: aborting the job\n",
                 rank_, static_cast<long long>(step_), phase_, waited, what_.c_str(), world_size_, peers.c_str(), limit,
                 last_step_.empty() ? "no step completed yet" : last_step_.c_str());
    std::fflush(stderr);
    abort_world(kExitFailure);
  }
}

}  // namespace emb
