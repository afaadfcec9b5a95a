// Where every rank of a node is in the training loop, kept in node-shared memory (an MPI-3
// shared window): the watchdog of a rank stuck in a collective reads its node peers' entries
// without their help, so it can name the peer it waits for, also one that is frozen
// (SIGSTOP, a hung process) and cannot answer any message. Peers on other nodes are not
// visible; their absence is said.
//
// Each rank posts every wait it enters (the n-th wait of the loop, its step and phase: the
// ranks pass through the same waits in the same order) and a heartbeat from its watchdog
// thread. A peer that posted fewer waits has not reached the one this rank waits in; a peer
// whose heartbeat stopped is frozen, and one whose heartbeat has been stale for long is
// reported without waiting for the collective's deadline (frozen_peer).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "comm/node_shared_memory.hpp"

namespace emb {

class ProgressBoard {
 public:
  // Collective over comm (split by node inside).
  explicit ProgressBoard(MPI_Comm comm);
  ~ProgressBoard();  // collective over the node, except while an exception unwinds
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;

  // This rank entered its next wait: `phase` (at most 23 bytes are kept) of `step`.
  void post_wait(int64_t step, const char* phase);
  // This rank is alive (its watchdog thread calls it every 100 ms).
  void heartbeat();
  // This rank's heartbeat ends on purpose (its watchdog stops): never report it as frozen.
  void leave();
  // "rank 3 on host n01 is frozen: no heartbeat for 31.4 s (last in phase step of step 17)"
  // for the first node peer whose heartbeat is older than stale_seconds, when this rank is the
  // live rank of the node that reports it (the lowest: one line per node); else "".
  std::string frozen_peer(double stale_seconds) const;
  // The node peers this rank is waiting for: "rank 3 (frozen: no heartbeat for 4.2 s; last in
  // phase step of step 17)", "rank 1 (has not reached this wait: in phase data_wait of step 17
  // for 9.5 s)", joined by "; ", or why none is named.
  std::string missing_peers() const;

 private:
  struct Entry;
  Entry* entry(int node_rank) const;

  MPI_Comm node_ = MPI_COMM_NULL;
  int node_rank_ = 0, node_size_ = 1, world_size_ = 1;
  std::unique_ptr<NodeSharedMemory> window_;
  int64_t posted_ = 0;  // this rank's waits so far
};

}  // namespace emb
