// The data-parallel ranks grouped by node: the ranks of one node share memory, so a shuffle
// buffer's feature rows are read once per node straight into one shared block (no copy or
// exchange inside a node); only rows read on another node travel by MPI.
#pragma once
#include <mpi.h>

#include <vector>

namespace emb {

struct NodeLayout {
  MPI_Comm ranks = MPI_COMM_NULL;  // the data-parallel ranks
  MPI_Comm node = MPI_COMM_NULL;   // this rank's node (a subset of `ranks` that can share memory)
  int rank = 0, size = 1;
  std::vector<int> node_of;                // node index of every rank
  std::vector<std::vector<int>> members;   // ranks of every node, ascending

  // Collective over `ranks`; `node` groups them (MPI_COMM_TYPE_SHARED, or a finer split in
  // tests). Neither communicator is owned.
  static NodeLayout of(MPI_Comm ranks, MPI_Comm node);
  int nodes() const { return int(members.size()); }
};

}  // namespace emb
