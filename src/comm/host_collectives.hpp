// Blocking collectives of host values over an MPI communicator: a step's scalars (loss sums,
// counts, flags), the report's statistics, a checkpoint's metadata, the loader's exchanges,
// and the communicators themselves (rank, size, the ranks of a node). With the asynchronous
// Comm (comm.hpp), node-shared memory (node_shared_memory.hpp) and point-to-point messages
// (messages.hpp) this is every MPI call outside src/comm, so that a reader finds the
// project's communication in one folder. All calls are collective over `comm` unless said.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace emb {

// Not collective.
int rank_in(MPI_Comm comm);
int ranks_in(MPI_Comm comm);

void barrier(MPI_Comm comm);

// In place over every rank.
void sum_over_ranks(MPI_Comm comm, double* values, int n);
void sum_over_ranks(MPI_Comm comm, float* values, int64_t n);
void sum_over_ranks(MPI_Comm comm, int64_t* values, int n);
void max_over_ranks(MPI_Comm comm, int64_t* values, int n);
int64_t max_over_ranks(MPI_Comm comm, int64_t value);
int64_t min_over_ranks(MPI_Comm comm, int64_t value);
double max_over_ranks(MPI_Comm comm, double value);
bool any_rank(MPI_Comm comm, bool flag);
// The sum of the values of the lower ranks (0 on rank 0): where this rank's rows start.
int64_t exclusive_sum(MPI_Comm comm, int64_t value);

// Rank 0 receives the minimum, maximum or sum of every rank's values; other ranks' `out` is
// left as it was. `out` may be `values` (in place).
void min_to_root(MPI_Comm comm, const double* values, double* out, int n);
void max_to_root(MPI_Comm comm, const double* values, double* out, int n);
void sum_to_root(MPI_Comm comm, const double* values, double* out, int n);
// Rank 0 receives every rank's `text`, in rank order; other ranks get nothing.
std::vector<std::string> gather_to_root(MPI_Comm comm, const std::string& text);

// Rank 0's values on every rank.
void broadcast(MPI_Comm comm, int64_t* values, int n);
void broadcast(MPI_Comm comm, uint32_t* values, int n);
void broadcast(MPI_Comm comm, double* values, int n);

// Every rank's `value`, in rank order.
std::vector<int> all_gather(MPI_Comm comm, int value);
// The same number of values on every rank.
std::vector<int64_t> all_gather(MPI_Comm comm, const std::vector<int64_t>& values);
std::vector<double> all_gather(MPI_Comm comm, const std::vector<double>& values);
// data[0, n) on every rank from the pieces of it each rank holds: rank r's is its
// shard_range(n, r, size) (shard_range.hpp), in place.
void all_gather_shards(MPI_Comm comm, float* data, int64_t n);

// Rows of `row_bytes` each: this rank sends send_count[k] rows from out + send_at[k] rows to
// rank k, and receives recv_count[k] rows from rank k into in + recv_at[k] rows.
void exchange_rows(MPI_Comm comm, const char* out, const std::vector<int>& send_count, const std::vector<int>& send_at,
                   char* in, const std::vector<int>& recv_count, const std::vector<int>& recv_at, size_t row_bytes);

// Communicators. A duplicate of `comm` (its own message space); the ranks of `comm` that share
// this node's memory, ordered as in `comm`; the ranks of `comm` with the same `color`, ordered
// by `key`. Each must be released with free_communicator.
MPI_Comm duplicate(MPI_Comm comm);
MPI_Comm split_by_node(MPI_Comm comm);
MPI_Comm split(MPI_Comm comm, int color, int key);
// Not collective for MPI_COMM_NULL, which it leaves alone; sets comm to MPI_COMM_NULL.
void free_communicator(MPI_Comm& comm);

// A barrier entered without waiting, then tested: a rank that must keep serving messages
// while it waits for the others.
class NonBlockingBarrier {
 public:
  void enter(MPI_Comm comm);
  bool entered() const { return entered_; }
  // True once every rank entered (never blocks).
  bool done();

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool entered_ = false;
};

// Whether MPI runs with MPI_THREAD_MULTIPLE (other threads may call MPI too). Not collective.
bool mpi_thread_multiple();

}  // namespace emb
