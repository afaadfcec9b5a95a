#include "data/node_layout.hpp"

#include <algorithm>

namespace emb {

NodeLayout NodeLayout::of(MPI_Comm ranks, MPI_Comm node) {
  NodeLayout n;
  n.ranks = ranks, n.node = node;
  MPI_Comm_rank(ranks, &n.rank);
  MPI_Comm_size(ranks, &n.size);
  // A node is named by its lowest rank.
  int lowest = n.rank;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node);
  std::vector<int> leader(size_t(n.size), 0);
  MPI_Allgather(&lowest, 1, MPI_INT, leader.data(), 1, MPI_INT, ranks);
  std::vector<int> leaders = leader;
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  n.members.resize(leaders.size());
  for (int r = 0; r < n.size; ++r) {
    int id = int(std::lower_bound(leaders.begin(), leaders.end(), leader[size_t(r)]) - leaders.begin());
    n.node_of.push_back(id);
    n.members[size_t(id)].push_back(r);
  }
  return n;
}

}  // namespace emb
