// The other ranks of an RL run as processes: which role each world rank has, its pid and its
// node. A rank that hears nothing (its watchdog) or whose job is being aborted (Open MPI sends
// SIGTERM to every survivor when one rank dies) looks at the peers on its own node through
// /proc, without their help: a peer that is gone died (kill -9, a crash, the OOM killer), one
// in state T is stopped (SIGSTOP, a debugger). Peers on other nodes are not visible.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "rl/rl_groups.hpp"

namespace emb {

class RlPeers {
 public:
  // Collective over `world`; node = this rank's node index (World::node).
  RlPeers(MPI_Comm world, const RlGroups& g, int node);
  // "simulator rank 2 (pid 4711 on host n01) died" or "... is stopped (SIGSTOP ...)" for the
  // first such peer on this node in rank order; "" when every node peer runs.
  std::string faulty_peer() const;
  // "simulator rank 2" for a world rank.
  std::string name(int world_rank) const;

 private:
  const RlGroups& g_;
  std::vector<int> pids_, nodes_;
  int node_;
};

}  // namespace emb
