// Gathers of one vector per rank, in rank order, for the few things a tool under MPI needs
// whole (embpack's statistics over every row, task list and warnings; embsim's per-episode
// records and per-rank summaries). MPI_COMM_NULL: this process is the only rank and gets its
// own vector back. Any length: counts beyond MPI's int go in rounds (gather_rounds.hpp).
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "comm/gather_rounds.hpp"
#include "core/error.hpp"

namespace emb {

// Most bytes one gather round moves in all (Open MPI 4.1 is unreliable with single messages
// near 2 GiB).
constexpr int64_t kGatherRoundBytes = int64_t(1) << 30;

namespace detail {
template <class T>
std::vector<T> gather_vectors(const std::vector<T>& mine, MPI_Comm comm, bool to_all, int64_t round_limit) {
  if (comm == MPI_COMM_NULL) return mine;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank), MPI_Comm_size(comm, &ranks);
  long long count = (long long)mine.size();
  std::vector<long long> all_counts(size_t(ranks), 0);
  MPI_Allgather(&count, 1, MPI_LONG_LONG, all_counts.data(), 1, MPI_LONG_LONG, comm);
  const GatherRounds plan(std::vector<int64_t>(all_counts.begin(), all_counts.end()), round_limit);
  MPI_Datatype element;  // one element of sizeof(T) bytes: counts are in elements
  MPI_Type_contiguous(int(sizeof(T)), MPI_BYTE, &element);
  MPI_Type_commit(&element);
  const bool receives = to_all || rank == 0;
  std::vector<T> out(receives ? size_t(plan.total()) : 0), staging;
  for (int64_t r = 0; r < plan.rounds(); ++r) {
    const GatherRound round = plan.round(r);
    const T* send = mine.data() + round.source[size_t(rank)];
    const int n = round.counts[size_t(rank)];
    staging.resize(receives ? size_t(round.displs.back() + round.counts.back()) : 0);
    if (to_all)
      MPI_Allgatherv(send, n, element, staging.data(), round.counts.data(), round.displs.data(), element, comm);
    else
      MPI_Gatherv(send, n, element, staging.data(), round.counts.data(), round.displs.data(), element, 0, comm);
    if (receives)
      for (size_t i = 0; i < size_t(ranks); ++i)
        std::copy_n(staging.begin() + round.displs[i], round.counts[i], out.begin() + round.target[i]);
  }
  MPI_Type_free(&element);
  return out;
}
}  // namespace detail

// Every rank's vector, concatenated in rank order, on rank 0 (empty on the others).
template <class T>
std::vector<T> gather_to_root(const std::vector<T>& mine, MPI_Comm comm,
                              int64_t round_limit = kGatherRoundBytes / int64_t(sizeof(T))) {
  return detail::gather_vectors(mine, comm, false, round_limit);
}

// Every rank's vector, concatenated in rank order, on every rank.
template <class T>
std::vector<T> gather_to_all(const std::vector<T>& mine, MPI_Comm comm,
                             int64_t round_limit = kGatherRoundBytes / int64_t(sizeof(T))) {
  return detail::gather_vectors(mine, comm, true, round_limit);
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
