#include "comm/node_shared_memory.hpp"

#include "core/error.hpp"

namespace emb {

NodeSharedMemory::NodeSharedMemory(MPI_Comm node, size_t my_bytes, const std::string& what) : node_(node) {
  void* mine = nullptr;
  const int rc = MPI_Win_allocate_shared(MPI_Aint(my_bytes), 1, MPI_INFO_NULL, node, &mine, &win_);
  EMB_CHECK(rc == MPI_SUCCESS, what);
}

NodeSharedMemory::~NodeSharedMemory() {
  if (win_ == MPI_WIN_NULL) return;
  if (locked_) MPI_Win_unlock_all(win_);
  MPI_Win_free(&win_);
}

void* NodeSharedMemory::piece(int node_rank) const {
  MPI_Aint size = 0;
  int unit = 0;
  void* base = nullptr;
  MPI_Win_shared_query(win_, node_rank, &size, &unit, &base);
  return base;
}

void NodeSharedMemory::lock_all() {
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
  locked_ = true;
}

void NodeSharedMemory::publish() {
  if (locked_) MPI_Win_sync(win_);
  MPI_Barrier(node_);
  if (locked_) MPI_Win_sync(win_);
}

}  // namespace emb
