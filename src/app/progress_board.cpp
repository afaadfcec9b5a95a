#include "app/progress_board.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "core/host_name.hpp"

namespace emb {

// One rank's slot. Lock-free 64-bit atomics work across processes sharing the memory;
// steady_clock (CLOCK_MONOTONIC) is one clock for every process of a node.
struct ProgressBoard::Entry {
  std::atomic<int64_t> world_rank{-1};
  std::atomic<int64_t> waits{0};       // waits posted so far
  std::atomic<int64_t> step{0};
  std::atomic<int64_t> since_ns{0};    // when the last wait began
  std::atomic<int64_t> alive_ns{0};    // last heartbeat; kLeft once its watchdog stopped
  char phase[24] = {};
  char host[64] = {};
};

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Seconds to a tenth, as the message shows them.
double seconds_between(int64_t from_ns, int64_t to_ns) { return std::round(double(to_ns - from_ns) * 1e-8) / 10; }

// A heartbeat older than this means the peer's process does not run: its watchdog thread
// beats every 100 ms whatever its main thread waits in.
constexpr double kFrozenSeconds = 2.0;

// The heartbeat of a rank whose watchdog stopped on purpose (the run ended on that rank).
constexpr int64_t kLeft = -1;

}  // namespace

ProgressBoard::ProgressBoard(MPI_Comm comm)
    : node_(split_by_node(comm)), node_rank_(rank_in(node_)), node_size_(ranks_in(node_)), world_size_(ranks_in(comm)) {
  window_ = std::make_unique<NodeSharedMemory>(node_, sizeof(Entry), "watchdog: cannot allocate the node's progress board");
  Entry* mine = new (window_->piece(node_rank_)) Entry;
  mine->world_rank = rank_in(comm);
  mine->alive_ns = now_ns();
  std::strncpy(mine->host, host_name().c_str(), sizeof mine->host - 1);
  window_->publish();  // every entry is constructed before any rank reads one
}

ProgressBoard::~ProgressBoard() {
  // Unwinding from a failure, the peers may be anywhere but in a matching free: leave the
  // window to the job's end (fail_run aborts it next) instead of waiting in a collective.
  if (std::uncaught_exceptions() > 0) {
    window_->abandon();
    return;
  }
  window_.reset();
  free_communicator(node_);
}

ProgressBoard::Entry* ProgressBoard::entry(int node_rank) const {
  return static_cast<Entry*>(window_->piece(node_rank));
}

void ProgressBoard::post_wait(int64_t step, const char* phase) {
  Entry* mine = entry(node_rank_);
  std::strncpy(mine->phase, phase, sizeof mine->phase - 1);
  mine->step = step;
  mine->since_ns = now_ns();
  mine->waits = ++posted_;
}

void ProgressBoard::heartbeat() { entry(node_rank_)->alive_ns = now_ns(); }

void ProgressBoard::leave() { entry(node_rank_)->alive_ns = kLeft; }

std::string ProgressBoard::frozen_peer(double stale_seconds) const {
  const int64_t now = now_ns();
  std::string frozen;
  for (int k = 0; k < node_size_; ++k) {
    const Entry* peer = entry(k);
    const int64_t alive = peer->alive_ns;
    if (k == node_rank_ || alive == kLeft) continue;
    const double silent = seconds_between(alive, now);
    if (silent <= stale_seconds) {
      if (k < node_rank_) return "";  // a live rank below this one reports it
    } else if (frozen.empty()) {
      frozen = str("rank ", peer->world_rank.load(), " on host ", peer->host, " is frozen: no heartbeat for ", silent,
                   " s (last in phase ", peer->phase[0] ? peer->phase : "init", " of step ", peer->step.load(), ")");
    }
  }
  return frozen;
}

std::string ProgressBoard::missing_peers() const {
  const int64_t now = now_ns(), mine = entry(node_rank_)->waits;
  std::string out;
  for (int k = 0; k < node_size_; ++k) {
    if (k == node_rank_) continue;
    const Entry* peer = entry(k);
    const double silent = seconds_between(peer->alive_ns, now);
    const std::string where = str("phase ", peer->phase[0] ? peer->phase : "init", " of step ", peer->step.load());
    std::string why;
    if (peer->alive_ns == kLeft) {
      why = str("its run has ended; last in ", where);
    } else if (silent > kFrozenSeconds) {
      why = str("frozen: no heartbeat for ", silent, " s; last in ", where);
    } else if (peer->waits < mine) {
      why = str("has not reached this wait: in ", where, " for ", seconds_between(peer->since_ns, now), " s");
    }
    if (!why.empty()) out += str(out.empty() ? "" : "; ", "rank ", peer->world_rank.load(), " (", why, ")");
  }
  if (!out.empty()) return out;
  return node_size_ == world_size_ ? "no rank is behind or frozen (a collective or file system hangs)"
                                   : "every rank of this node reached this wait: the one missing is on another node";
}

}  // namespace emb
