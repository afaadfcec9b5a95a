#include "data/node_layout.hpp"

#include <algorithm>

#include "comm/host_collectives.hpp"

namespace emb {

NodeLayout NodeLayout::of(MPI_Comm ranks, MPI_Comm node) {
  NodeLayout n;
  n.ranks = ranks, n.node = node;
  n.rank = rank_in(ranks), n.size = ranks_in(ranks);
  // A node is named by its lowest rank.
  const std::vector<int> leader = all_gather(ranks, int(min_over_ranks(node, n.rank)));
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
