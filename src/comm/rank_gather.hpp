// Gathers of one vector per rank, in rank order, for the few things a tool under MPI needs
// whole (embpack's statistics over every row, task list and warnings; embsim's per-episode
// records and per-rank summaries). MPI_COMM_NULL: this
// process is the only rank and gets its own vector back. MPI counts are int: at most 2^31 - 1
// values in all (state/action rows of up to ~80M steps at 26 floats; never video frames).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace emb {

namespace detail {
template <class T>
std::vector<T> gather_vectors(const std::vector<T>& mine, MPI_Comm comm, bool to_all) {
  if (comm == MPI_COMM_NULL) return mine;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank), MPI_Comm_size(comm, &ranks);
  // Counts in elements of one MPI type of sizeof(T) bytes: up to 2^31 - 1 elements in all.
  long long count = (long long)mine.size();
  std::vector<long long> all_counts(size_t(ranks), 0);
  MPI_Allgather(&count, 1, MPI_LONG_LONG, all_counts.data(), 1, MPI_LONG_LONG, comm);
  std::vector<int> counts, displs;
  long long total = 0;
  for (long long c : all_counts) {
    EMB_CHECK(total + c < (1LL << 31), "rank gather: more than 2^31 values (state/action rows) to gather over the ranks");
    counts.push_back(int(c)), displs.push_back(int(total)), total += c;
  }
  MPI_Datatype element;
  MPI_Type_contiguous(int(sizeof(T)), MPI_BYTE, &element);
  MPI_Type_commit(&element);
  std::vector<T> out(to_all || rank == 0 ? size_t(total) : 0);
  if (to_all)
    MPI_Allgatherv(mine.data(), int(count), element, out.data(), counts.data(), displs.data(), element, comm);
  else
    MPI_Gatherv(mine.data(), int(count), element, out.data(), counts.data(), displs.data(), element, 0, comm);
  MPI_Type_free(&element);
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

// Every rank's byte blob on rank 0, one per rank in rank order (nothing on the others).
inline std::vector<std::vector<uint8_t>> gather_bytes(MPI_Comm comm, const std::vector<uint8_t>& mine) {
  const std::vector<int64_t> sizes = gather_to_root(std::vector<int64_t>{int64_t(mine.size())}, comm);
  const std::vector<uint8_t> all = gather_to_root(mine, comm);
  std::vector<std::vector<uint8_t>> out;
  size_t at = 0;
  for (int64_t n : sizes) {
    out.emplace_back(all.begin() + int64_t(at), all.begin() + int64_t(at + size_t(n)));
    at += size_t(n);
  }
  return out;
}

}  // namespace emb
