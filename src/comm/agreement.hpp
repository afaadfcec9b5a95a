// Agreeing on an outcome across ranks. A step that every rank runs (reading the deck,
// creating the run directory, writing or reading a checkpoint) must fail on every rank at
// the same point: a rank that threw alone would leave the others waiting in the next
// collective. Each rank reports its local outcome; if any rank failed, every rank throws the
// same emb::Error (the message and exit code of the lowest failing rank).
#pragma once
#include <mpi.h>

#include <exception>
#include <string>

#include "core/error.hpp"

namespace emb {

// The error every rank of the communicator throws alike after agreeing: one rank (0) needs
// to print it, and no rank waits for another.
class AgreedError : public Error {
 public:
  using Error::Error;
};

// Collective. `local_error` is "" where this rank succeeded; throws AgreedError.
// MPI_COMM_NULL: this process alone (throws its own error, if any).
void throw_if_any_rank_failed(MPI_Comm comm, const std::string& local_error, int exit_code = kExitFailure);

// Runs f on this rank, then agrees: f's exception (if any) is rethrown on every rank.
template <class F>
void run_agreed(MPI_Comm comm, F&& f) {
  std::string error;
  int code = kExitFailure;
  try {
    f();
  } catch (const Error& e) {
    error = e.what(), code = e.exit_code();
  } catch (const std::exception& e) {
    error = e.what();
  }
  throw_if_any_rank_failed(comm, error, code);
}

// Copies rank 0's string to every rank.
void broadcast_string(MPI_Comm comm, std::string& text);

}  // namespace emb
