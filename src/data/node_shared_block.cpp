#include "data/node_shared_block.hpp"

#include "comm/host_collectives.hpp"
#include "core/error.hpp"

namespace emb {

NodeSharedBlock::~NodeSharedBlock() { release(); }

void NodeSharedBlock::release() {
  if (!window_) return;
  window_.reset();
  base_ = nullptr, capacity_ = 0;
}

void NodeSharedBlock::fit(size_t bytes, MPI_Comm node) {
  if (bytes <= capacity_) return;
  release();
  size_t capacity = ((bytes + bytes / 4) + 4095) & ~size_t(4095);
  if (ranks_in(node) == 1) {
    private_.reserve(capacity);
    base_ = private_.alloc<char>(capacity);
    capacity_ = capacity;
    return;
  }
  // The lowest rank allocates it all, so the block is contiguous and page-aligned.
  window_ = std::make_unique<NodeSharedMemory>(
      node, rank_in(node) == 0 ? capacity : 0,
      str("data: cannot allocate a ", capacity, "-byte shared-memory block for the node"));
  base_ = static_cast<char*>(window_->piece(0));
  capacity_ = capacity;
  // One passive epoch for the block's lifetime; publish() orders the ranks' plain stores.
  window_->lock_all();
}

void NodeSharedBlock::publish() {
  if (window_) window_->publish();
}

}  // namespace emb
