// How the thread that executes the MPI backend's collectives waits for their requests.
#pragma once
#include <mpi.h>

#include "config/comm_config.hpp"

namespace emb {

// Waits until all `count` requests complete; throws "MPI <what> failed: ..." on an error.
// CommProgress::none blocks in MPI_Waitall. CommProgress::thread (the progress thread) polls
// with MPI_Testall and a growing pause instead: MPI_Waitall's busy-wait would take a core from
// the compute threads (MACHINE.md: no spare core here).
void wait_requests(MPI_Request* requests, int count, CommProgress progress, const char* what);

}  // namespace emb
