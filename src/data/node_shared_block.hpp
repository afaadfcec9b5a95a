// One block of memory that every rank of a node maps (an MPI-3 shared-memory window), kept
// across loads: it grows without shrinking (+25% headroom), since fresh pages cost ~10 µs
// each on the development VM (MACHINE.md). All calls are collective over the node. A node of
// one rank keeps a private huge-page arena instead: shared memory has no transparent huge
// pages here (shmem_enabled = never), and private huge pages read faster on one rank.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>

#include "comm/node_shared_memory.hpp"
#include "core/arena.hpp"

namespace emb {

class NodeSharedBlock {
 public:
  NodeSharedBlock() = default;
  ~NodeSharedBlock();
  NodeSharedBlock(const NodeSharedBlock&) = delete;
  NodeSharedBlock& operator=(const NodeSharedBlock&) = delete;

  // At least `bytes`, the same on every rank of `node`; the contents are undefined after a
  // call that grows the block.
  void fit(size_t bytes, MPI_Comm node);
  char* data() const { return base_; }
  // Returns once every rank's writes to the block are visible to every rank.
  void publish();

 private:
  void release();
  std::unique_ptr<NodeSharedMemory> window_;
  Arena private_;
  char* base_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace emb
