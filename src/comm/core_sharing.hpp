// Whether the ranks of a node take turns on its cores, and whether the MPI library then yields
// the core while a rank waits. Open MPI busy-polls in every blocking call unless mpirun saw the
// node oversubscribed (more ranks than its slots) or mpi_yield_when_idle is set; ranks confined
// to fewer cores than ranks without mpirun knowing (--cpu-set, a rankfile, a cpuset set up
// around mpirun) spin through their partners' turns in every blocking reduction: tiny_gr00t at 2
// ranks on one core stepped in 58 ms spinning against 36 ms yielding
// (regression/plan_validation.md, session 19).
#pragma once
#include <mpi.h>

#include <optional>
#include <string>

namespace emb {

// The cores the node's ranks may run on: the union of their affinity masks (collective over
// `node`, the ranks sharing this node's memory). 0 where a rank cannot read its mask.
int node_cores(MPI_Comm node);

// Open MPI's mpi_yield_when_idle as the running library holds it (an MPI_T control variable,
// true where mpirun saw the node oversubscribed); nullopt where the library has no such variable.
std::optional<bool> mpi_yields_when_idle();

// The warning for `ranks` ranks of `host` sharing `cores` cores with the library's `yields`:
// empty where they do not share, or the library yields or does not say.
std::string core_sharing_warning(const std::string& host, int ranks, int cores, std::optional<bool> yields);

}  // namespace emb
