// One error line for a failure that any rank of a collective step may meet: the lowest
// failing rank throws its message, the others an empty emb::Error (printed by none), so
// every rank stops and the line appears once. MPI_COMM_NULL: this process alone.
#pragma once
#include <mpi.h>

#include <string>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"

namespace emb {

// Collective; `error` is this rank's message ("" when it succeeded), `exit_code` its exit code
// (kExitInput for input the user must fix); every rank throws the highest code.
inline void throw_if_any_failed(const std::string& error, MPI_Comm comm, int exit_code = kExitFailure) {
  const bool alone = comm == MPI_COMM_NULL;
  const int rank = alone ? 0 : rank_in(comm), ranks = alone ? 1 : ranks_in(comm);
  const int64_t mine = error.empty() ? ranks : rank, my_code = error.empty() ? 0 : exit_code;
  const int64_t failed = alone ? mine : min_over_ranks(comm, mine);
  const int64_t code = alone ? my_code : max_over_ranks(comm, my_code);
  if (failed < ranks) throw Error(rank == failed ? error : "", int(code));
}

}  // namespace emb
