// Gathers of one vector per rank, in rank order, for the few things a converter under MPI
// needs whole (statistics over every row, the task list, warnings). MPI_COMM_NULL: this
// process is the only rank and gets its own vector back. Counts are int bytes: each rank's
// share must stay under 2 GiB (state/action rows, strings; never video frames).
#pragma once
#include <mpi.h>

#include <vector>

#include "core/error.hpp"

namespace emb {

namespace detail {
template <class T>
std::vector<T> gather_vectors(const std::vector<T>& mine, MPI_Comm comm, bool to_all) {
  if (comm == MPI_COMM_NULL) return mine;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank), MPI_Comm_size(comm, &ranks);
  long long bytes = (long long)(mine.size() * sizeof(T));
  std::vector<long long> all_bytes(size_t(ranks), 0);
  MPI_Allgather(&bytes, 1, MPI_LONG_LONG, all_bytes.data(), 1, MPI_LONG_LONG, comm);
  std::vector<int> counts, displs;
  long long total = 0;
  for (long long b : all_bytes) {
    EMB_CHECK(b < (1LL << 31) && total + b < (1LL << 31), "embpack: a gathered share exceeds 2 GiB");
    counts.push_back(int(b)), displs.push_back(int(total)), total += b;
  }
  std::vector<T> out(to_all || rank == 0 ? size_t(total) / sizeof(T) : 0);
  if (to_all)
    MPI_Allgatherv(mine.data(), int(bytes), MPI_BYTE, out.data(), counts.data(), displs.data(), MPI_BYTE, comm);
  else
    MPI_Gatherv(mine.data(), int(bytes), MPI_BYTE, out.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm);
  return out;
}
}  // namespace detail

// Every rank's vector, concatenated in rank order, on rank 0 (empty on the others).
template <class T>
std::vector<T> gather_to_root(const std::vector<T>& mine, MPI_Comm comm) {
  return detail::gather_vectors(mine, comm, false);
}

// Every rank's vector, concatenated in rank order, on every rank.
template <class T>
std::vector<T> gather_to_all(const std::vector<T>& mine, MPI_Comm comm) {
  return detail::gather_vectors(mine, comm, true);
}

}  // namespace emb
