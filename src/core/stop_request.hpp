// A graceful stop asked for by a signal: Slurm pre-emption (SIGTERM, or SIGUSR1 from
// --signal), the SIGUSR1 that scripts/mpirun_graceful.sh forwards for SIGTERM or Ctrl-C to a
// plain `mpirun`, or Ctrl-C (SIGINT) to a rank run without a launcher. The handler only notes
// the request; the run finishes its current step (RL: update), agrees with the other ranks
// that it stops there, writes its checkpoint and outputs, and exits 0.
#pragma once
#include <initializer_list>

namespace emb {

// From now on each of `signals` asks for a stop instead of ending the process.
void catch_stop_signals(std::initializer_list<int> signals);

// Whether one of them arrived (this rank only: the caller agrees across ranks).
bool stop_requested();

}  // namespace emb
