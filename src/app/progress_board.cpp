#include "app/progress_board.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "core/error.hpp"

namespace emb {

// One rank's slot. Lock-free 64-bit atomics work across processes sharing the memory;
// steady_clock (CLOCK_MONOTONIC) is one clock for every process of a node.
struct ProgressBoard::Entry {
  std::atomic<int64_t> world_rank{-1};
  std::atomic<int64_t> waits{0};       // waits posted so far
  std::atomic<int64_t> step{0};
  std::atomic<int64_t> since_ns{0};    // when the last wait began
  std::atomic<int64_t> alive_ns{0};    // last heartbeat
  char phase[24] = {};
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

}  // namespace

ProgressBoard::ProgressBoard(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &world_size_);
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_);
  MPI_Comm_rank(node_, &node_rank_);
  MPI_Comm_size(node_, &node_size_);
  void* base = nullptr;
  MPI_Win_allocate_shared(MPI_Aint(sizeof(Entry)), 1, MPI_INFO_NULL, node_, &base, &window_);
  Entry* mine = new (base) Entry;
  mine->world_rank = rank;
  mine->alive_ns = now_ns();
  MPI_Barrier(node_);  // every entry is constructed before any rank reads one
}

ProgressBoard::~ProgressBoard() {
  // Unwinding from a failure, the peers may be anywhere but in a matching free: leave the
  // window to the job's end (fail_run aborts it next) instead of waiting in a collective.
  if (std::uncaught_exceptions() > 0) return;
  MPI_Win_free(&window_);
  MPI_Comm_free(&node_);
}

ProgressBoard::Entry* ProgressBoard::entry(int node_rank) const {
  MPI_Aint size = 0;
  int unit = 0;
  void* base = nullptr;
  MPI_Win_shared_query(window_, node_rank, &size, &unit, &base);
  return static_cast<Entry*>(base);
}

void ProgressBoard::post_wait(int64_t step, const char* phase) {
  Entry* mine = entry(node_rank_);
  std::strncpy(mine->phase, phase, sizeof mine->phase - 1);
  mine->step = step;
  mine->since_ns = now_ns();
  mine->waits = ++posted_;
}

void ProgressBoard::heartbeat() { entry(node_rank_)->alive_ns = now_ns(); }

std::string ProgressBoard::missing_peers() const {
  const int64_t now = now_ns(), mine = entry(node_rank_)->waits;
  std::string out;
  for (int k = 0; k < node_size_; ++k) {
    if (k == node_rank_) continue;
    const Entry* peer = entry(k);
    const double silent = seconds_between(peer->alive_ns, now);
    const std::string where = str("phase ", peer->phase[0] ? peer->phase : "init", " of step ", peer->step.load());
    std::string why;
    if (silent > kFrozenSeconds) {
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
