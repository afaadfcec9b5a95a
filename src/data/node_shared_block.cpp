#include "data/node_shared_block.hpp"

#include "core/error.hpp"

namespace emb {

NodeSharedBlock::~NodeSharedBlock() { release(); }

void NodeSharedBlock::release() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
  base_ = nullptr, capacity_ = 0;
}

void NodeSharedBlock::fit(size_t bytes, MPI_Comm node) {
  node_ = node;
  if (bytes <= capacity_) return;
  release();
  size_t capacity = ((bytes + bytes / 4) + 4095) & ~size_t(4095);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &ranks);
  if (ranks == 1) {
    private_.reserve(capacity);
    base_ = private_.alloc<char>(capacity);
    capacity_ = capacity;
    return;
  }
  // The lowest rank allocates it all, so the block is contiguous and page-aligned.
  void* mine = nullptr;
  int rc = MPI_Win_allocate_shared(MPI_Aint(rank == 0 ? capacity : 0), 1, MPI_INFO_NULL, node, &mine, &win_);
  EMB_CHECK(rc == MPI_SUCCESS, "data: cannot allocate a ", capacity, "-byte shared-memory block for the node");
  MPI_Aint size = 0;
  int unit = 0;
  MPI_Win_shared_query(win_, 0, &size, &unit, &base_);
  capacity_ = capacity;
  // One passive epoch for the block's lifetime; publish() orders the ranks' plain stores.
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
}

void NodeSharedBlock::publish() {
  if (win_ == MPI_WIN_NULL) return;
  MPI_Win_sync(win_);
  MPI_Barrier(node_);
  MPI_Win_sync(win_);
}

}  // namespace emb
