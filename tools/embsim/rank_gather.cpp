#include "rank_gather.hpp"

#include "core/error.hpp"

namespace emb {

std::vector<std::vector<uint8_t>> gather_bytes(MPI_Comm comm, const std::vector<uint8_t>& mine) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  long long n = (long long)mine.size();
  std::vector<long long> sizes(static_cast<size_t>(size));
  MPI_Gather(&n, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, 0, comm);
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  long long total = 0;
  for (int r = 0; r < size; ++r) {
    EMB_CHECK(sizes[size_t(r)] < (1ll << 31), "rank ", r, " has more than 2 GiB of records to gather");
    counts[size_t(r)] = int(sizes[size_t(r)]), displs[size_t(r)] = int(total), total += sizes[size_t(r)];
  }
  EMB_CHECK(rank != 0 || total < (1ll << 31), "more than 2 GiB of records to gather on rank 0; use fewer episodes per file");
  std::vector<uint8_t> all(rank == 0 ? size_t(total) : 0);
  MPI_Gatherv(mine.data(), int(n), MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm);
  std::vector<std::vector<uint8_t>> out;
  if (rank == 0)
    for (int r = 0; r < size; ++r)
      out.emplace_back(all.begin() + displs[size_t(r)], all.begin() + displs[size_t(r)] + counts[size_t(r)]);
  return out;
}

}  // namespace emb
