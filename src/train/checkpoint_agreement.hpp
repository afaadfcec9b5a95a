// Errors inside a collective operation (a checkpoint written or read by every rank) must end
// it on every rank at the same point: a rank that threw alone would leave the others waiting
// in the next collective call. Each rank reports its local outcome; if any rank failed, every
// rank throws the same emb::Error (the message of the lowest failing rank).
#pragma once
#include <mpi.h>

#include <exception>
#include <string>

namespace emb {

// Collective. `local_error` is "" where this rank succeeded.
void throw_if_any_rank_failed(MPI_Comm comm, const std::string& local_error);

// Runs f on this rank, then agrees: f's exception (if any) is rethrown on every rank.
template <class F>
void run_agreed(MPI_Comm comm, F&& f) {
  std::string error;
  try {
    f();
  } catch (const std::exception& e) {
    error = e.what();
  }
  throw_if_any_rank_failed(comm, error);
}

// Copies rank 0's string to every rank.
void broadcast_string(MPI_Comm comm, std::string& text);

}  // namespace emb
