// How an RL run fails: one line for the whole job, the run directory's FAILED, every rank
// gone within seconds, whichever rank fails and however.
//   - A rank whose role throws (its own error, or its watchdog: it heard nothing for
//     train.watchdog_s) reports; when a peer on its node died or is stopped the line names that
//     peer first (rl_peers.hpp), since it is the cause.
//   - A rank killed outright (kill -9, the OOM killer) cannot report: Open MPI then sends
//     SIGTERM to every other rank before killing them a second later; AbortWatch turns that
//     SIGTERM into the line naming the dead peer.
// Several ranks may see the same fault at once: the claim (the caller's: creating FAILED
// exclusively) lets the first one print; the others stay silent and leave it time to end the job.
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "rl/roles/rl_peers.hpp"

namespace emb {

// Whether this rank is the one to report `line` (it wrote FAILED); always true without a run directory.
using FailureClaim = std::function<bool(const std::string& line)>;

// Prints `line` when the claim is this rank's, then ends every rank (MPI_Abort, exit 1).
[[noreturn]] void fail_rl_run(const FailureClaim& claim, const std::string& line);

// "embsim rl: <peer fault>; <who>: <what>" when a node peer died or is stopped, else
// "embsim rl: <who>: <what>" (who = "trainer rank 0").
std::string rl_failure_line(const RlPeers& peers, int world_rank, const std::string& what);

// While it lives, SIGTERM (Open MPI aborting the job) makes this rank report a dead or stopped
// node peer (one line, claimed as above) before it ends as SIGTERM ends it. A SIGTERM with no
// such peer ends it silently, as before.
class AbortWatch {
 public:
  AbortWatch(const RlPeers& peers, int world_rank, FailureClaim claim);
  ~AbortWatch();
  AbortWatch(const AbortWatch&) = delete;
  AbortWatch& operator=(const AbortWatch&) = delete;

 private:
  void run();

  const RlPeers& peers_;
  const int world_rank_;
  const FailureClaim claim_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace emb
