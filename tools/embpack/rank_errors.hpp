// One error line for a failure that any rank of a collective step may meet: the lowest
// failing rank throws its message, the others an empty emb::Error (printed by none), so
// every rank stops and the line appears once. MPI_COMM_NULL: this process alone.
#pragma once
#include <mpi.h>

#include <string>

#include "core/error.hpp"

namespace emb {

// Collective; `error` is this rank's message ("" when it succeeded), `exit_code` its exit code
// (kExitInput for input the user must fix); every rank throws the highest code.
inline void throw_if_any_failed(const std::string& error, MPI_Comm comm, int exit_code = kExitFailure) {
  int rank = 0, ranks = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank), MPI_Comm_size(comm, &ranks);
  int failed = error.empty() ? ranks : rank;
  int code = error.empty() ? 0 : exit_code;
  if (comm != MPI_COMM_NULL) {
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MAX, comm);
  }
  if (failed < ranks) throw Error(rank == failed ? error : "", code);
}

}  // namespace emb
