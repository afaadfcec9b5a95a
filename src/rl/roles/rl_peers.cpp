#include "rl/roles/rl_peers.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "core/host_name.hpp"

namespace emb {

namespace {

// The state letter of /proc/<pid>/stat ('R', 'S', 'T', 'Z', ...); 0 when the process is gone.
char process_state(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  const size_t paren = line.rfind(')');  // the command name may hold spaces and parentheses
  return paren == std::string::npos || paren + 2 >= line.size() ? 0 : line[paren + 2];
}

}  // namespace

RlPeers::RlPeers(MPI_Comm world, const RlGroups& g, int node)
    : g_(g), pids_(all_gather(world, int(::getpid()))), nodes_(all_gather(world, node)), node_(node) {}

std::string RlPeers::name(int world_rank) const {
  const auto in = [world_rank](const std::vector<int>& ranks) {
    return std::find(ranks.begin(), ranks.end(), world_rank) != ranks.end();
  };
  const RlGroups::Role role = in(g_.trainers) ? RlGroups::Role::trainer
                              : in(g_.generators) ? RlGroups::Role::generator
                                                  : RlGroups::Role::simulator;
  return str(role_name(role), " rank ", world_rank);
}

std::string RlPeers::faulty_peer() const {
  for (size_t r = 0; r < pids_.size(); ++r) {
    if (int(r) == g_.world_rank || nodes_[r] != node_) continue;
    const char state = process_state(pids_[r]);
    const std::string who = str(name(int(r)), " (pid ", pids_[r], " on host ", host_name(), ")");
    if (state == 0 || state == 'Z' || state == 'X') return who + " died (killed or crashed)";
    if (state == 'T' || state == 't') return who + " is stopped (SIGSTOP or a debugger)";
  }
  return "";
}

}  // namespace emb
