// Memory every rank of a node maps (an MPI-3 shared-memory window): each rank contributes a
// piece (possibly empty) and reads or writes any peer's piece with plain loads and stores,
// without the peer's help. The loader's shared shuffle buffers and the watchdog's progress
// board live in such windows. Construction and release are collective over the node.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>

namespace emb {

class NodeSharedMemory {
 public:
  NodeSharedMemory() = default;
  // Collective over `node` (ranks that share memory: split_by_node). Throws emb::Error with the
  // message `what` when the window cannot be allocated.
  NodeSharedMemory(MPI_Comm node, size_t my_bytes, const std::string& what);
  ~NodeSharedMemory();  // collective over the node
  NodeSharedMemory(const NodeSharedMemory&) = delete;
  NodeSharedMemory& operator=(const NodeSharedMemory&) = delete;

  // The piece of `node_rank` in this process's address space.
  void* piece(int node_rank) const;
  // Starts one passive epoch for the window's lifetime (ended at release): publish() then
  // orders the ranks' plain stores.
  void lock_all();
  // Returns once every rank's stores to the window are visible to every rank (collective).
  void publish();
  // Leaves the window to the job's end: a rank unwinding from a failure must not wait in the
  // collective release while its peers are anywhere else.
  void abandon() { win_ = MPI_WIN_NULL; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  bool locked_ = false;
};

}  // namespace emb
