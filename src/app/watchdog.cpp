#include "app/watchdog.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/fail_run.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace emb {

namespace {

constexpr size_t kRecentSteps = 64;  // the median step time is of these

std::string one_decimal(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", x);
  return text;
}

// "previous step S: fwd 0.01 s bwd 0.02 s ..." (the phases that took time).
std::string describe_step(const StepTimes& times) {
  std::string text = str("previous step ", times.step, ":");
  for (int p = 0; p < kNumPhases; ++p)
    if (times.seconds[size_t(p)] > 0) text += str(" ", phase_name(Phase(p)), " ", times.seconds[size_t(p)], " s");
  return text;
}

}  // namespace

Watchdog::Watchdog(int rank, int world_size, double setting_seconds, double frozen_peer_seconds)
    : rank_(rank), world_size_(world_size), setting_(setting_seconds), frozen_peer_setting_(frozen_peer_seconds) {
  if (setting_ < 0) return;
  if (world_size_ > 1) board_ = std::make_unique<ProgressBoard>(MPI_COMM_WORLD);
  thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    if (board_) board_->leave();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::watch(const char* phase, int64_t step, std::string_view what, double min_seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  watching_ = true;
  phase_ = phase;
  step_ = step;
  what_.assign(what);  // reuses what_'s capacity: no allocation per step
  min_seconds_ = min_seconds;
  since_ = PhaseTimers::Clock::now();
  if (board_) board_->post_wait(step, phase);
}

void Watchdog::step_done(double seconds, const StepTimes& times) {
  std::lock_guard<std::mutex> lock(mutex_);
  longest_step_ = std::max(longest_step_, seconds);
  if (recent_steps_.size() < kRecentSteps) recent_steps_.push_back(seconds);
  else recent_steps_[steps_seen_ % kRecentSteps] = seconds;
  ++steps_seen_;
  last_step_ = times;
}

void Watchdog::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  watching_ = false;
}

double Watchdog::deadline_locked() const {
  if (setting_ > 0) return setting_;
  return std::max({kWatchdogFloorSeconds, kWatchdogStepFactor * longest_step_, min_seconds_});
}

double Watchdog::frozen_peer_limit_locked() const {
  if (frozen_peer_setting_ != 0) return frozen_peer_setting_;
  std::vector<double> steps = recent_steps_;
  double median = 0;
  if (!steps.empty()) {
    std::nth_element(steps.begin(), steps.begin() + long(steps.size() / 2), steps.end());
    median = steps[steps.size() / 2];
  }
  return std::max(kFrozenPeerFloorSeconds, kFrozenPeerStepFactor * median);
}

void Watchdog::abort_job(const std::string& message) const {
  const std::string line = str("embtrain: error on rank ", rank_, ": ", message, "\n");
  error_line(line);
  write_failure_marker(line);
  abort_world(kExitFailure);
}

void Watchdog::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::milliseconds(100));
    if (board_) board_->heartbeat();
    if (stop_ || !watching_) continue;
    const double frozen_limit = frozen_peer_limit_locked();
    const std::string frozen = board_ && frozen_limit > 0 ? board_->frozen_peer(frozen_limit) : "";
    if (!frozen.empty())
      abort_job(str("watchdog: ", frozen, ", over ", frozen_limit, " s (train.frozen_peer_s) while this rank waits in "
                    "phase ", phase_, " of step ", step_, "; the rank's process is stopped or its node hangs: aborting "
                    "the job"));
    const double waited = seconds_since(since_), limit = deadline_locked();
    if (waited <= limit) continue;
    const std::string peers = board_ ? str("; waiting for ", board_->missing_peers()) : "";
    abort_job(str("watchdog: step ", step_, ", phase ", phase_, " has waited ", one_decimal(waited), " s for ", what_,
                  " (over ", world_size_, " rank(s))", peers, ", deadline ", int64_t(std::lround(limit)),
                  " s (train.watchdog_s); ", last_step_ ? describe_step(*last_step_) : "no step completed yet",
                  "; a rank is frozen or a file system or network hangs: aborting the job"));
  }
}

}  // namespace emb
