// The watchdog of a training rank (DESIGN.md "Errors": never a hang). Every blocking wait of
// the training loop (data read, a step's collectives, a checkpoint's collective writes and
// barriers, the final report's gather) is announced with watch(); a thread of the rank wakes
// every 100 ms, and when the current wait has lasted longer than its deadline it prints one
// line (rank, step, phase, what it waits for, the previous step's phase timers) and aborts
// the job non-zero (MPI_Abort: mpirun then kills every rank, a stopped one included).
// A frozen rank (SIGSTOP, a hung node, a stuck file system) cannot report itself; the ranks
// waiting for it in a collective do, naming it where it shares their node (progress_board.hpp).
//
// Deadline (train.watchdog_s): > 0 seconds for every wait; 0 = automatic: the larger of a
// floor (kWatchdogFloorSeconds) and kWatchdogStepFactor × the longest step so far (a
// checkpoint wait also at least its bytes at 20 MB/s); < 0 = off.
// A node peer frozen for long is reported sooner, while this rank waits in any phase: its
// heartbeat is older than train.frozen_peer_s (> 0 seconds; 0 = automatic: the larger of
// kFrozenPeerFloorSeconds and kFrozenPeerStepFactor × the median of the recent steps;
// < 0 = off). Either report is one line, the run directory's FAILED, and the job's abort.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/timer.hpp"
#include "app/progress_board.hpp"

namespace emb {

constexpr double kWatchdogFloorSeconds = 300;
constexpr double kWatchdogStepFactor = 10;
constexpr double kFrozenPeerFloorSeconds = 30;
constexpr double kFrozenPeerStepFactor = 5;

class Watchdog {
 public:
  // Collective over MPI_COMM_WORLD (the progress board of each node) when more than one rank
  // runs with a watchdog.
  Watchdog(int rank, int world_size, double setting_seconds, double frozen_peer_seconds);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // From now on the rank waits in `phase` of `step` for `what`; min_seconds raises the
  // automatic deadline for a wait known to be long (a checkpoint of many bytes).
  void watch(const char* phase, int64_t step, std::string_view what, double min_seconds = 0);
  // A step ended after `seconds` with these phase times: scales the automatic deadline. Kept as
  // numbers: the text is made only when the watchdog aborts (a step allocates nothing here).
  void step_done(double seconds, const StepTimes& times);
  // Nothing is awaited (the run is over).
  void idle();

 private:
  void run();
  double deadline_locked() const;
  double frozen_peer_limit_locked() const;
  [[noreturn]] void abort_job(const std::string& message) const;

  const int rank_, world_size_;
  const double setting_, frozen_peer_setting_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, watching_ = false;
  const char* phase_ = "";
  int64_t step_ = 0;
  std::string what_;
  std::optional<StepTimes> last_step_;  // none until a step completed
  double min_seconds_ = 0, longest_step_ = 0;
  std::vector<double> recent_steps_;  // the last kRecentSteps step times, oldest overwritten
  size_t steps_seen_ = 0;
  PhaseTimers::Clock::time_point since_;
  std::unique_ptr<ProgressBoard> board_;  // null on one rank or with the watchdog off
  std::thread thread_;
};

}  // namespace emb
