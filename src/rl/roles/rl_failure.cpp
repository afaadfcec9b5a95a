#include "rl/roles/rl_failure.hpp"

#include <chrono>
#include <csignal>

#include "comm/world.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace emb {

namespace {

volatile std::sig_atomic_t g_sigterm = 0;

extern "C" void note_sigterm(int) { g_sigterm = 1; }

// Long enough for the reporting rank to print and abort the job (which ends this rank too).
constexpr auto kLeaveTheReportTo = std::chrono::seconds(5);
constexpr auto kPoll = std::chrono::milliseconds(20);
}  // namespace

void fail_rl_run(const FailureClaim& claim, const std::string& line) {
  if (!claim || claim(line)) {
    error_line(line);
  } else {
    std::this_thread::sleep_for(kLeaveTheReportTo);
  }
  abort_world(kExitFailure);
}

std::string rl_failure_line(const RlPeers& peers, int world_rank, const std::string& what) {
  const std::string peer = peers.faulty_peer();
  return str("embsim rl: ", peer.empty() ? "" : peer + "; ", peers.name(world_rank), ": ", what, "\n");
}

AbortWatch::AbortWatch(const RlPeers& peers, int world_rank, FailureClaim claim)
    : peers_(peers), world_rank_(world_rank), claim_(std::move(claim)) {
  g_sigterm = 0;
  std::signal(SIGTERM, note_sigterm);
  thread_ = std::thread([this] { run(); });
}

AbortWatch::~AbortWatch() {
  stop_ = true;
  thread_.join();
  std::signal(SIGTERM, SIG_DFL);
}

void AbortWatch::run() {
  while (!stop_ && !g_sigterm) std::this_thread::sleep_for(kPoll);
  if (!g_sigterm) return;
  const std::string peer = peers_.faulty_peer();
  if (!peer.empty()) {
    const std::string line =
        str("embsim rl: ", peer, "; the job is aborted (seen by ", peers_.name(world_rank_), ")\n");
    if (!claim_ || claim_(line)) error_line(line);
  }
  std::signal(SIGTERM, SIG_DFL);
  std::raise(SIGTERM);
}

}  // namespace emb
