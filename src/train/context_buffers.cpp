#include "train/context_buffers.hpp"

namespace emb {

View ContextBuffers::rows(int slot, int64_t rows) {
  if (int(buffers_.size()) <= slot) buffers_.resize(size_t(slot) + 1);
  Buffer& b = buffers_[size_t(slot)];
  if (b.rows.rows < rows) {
    b.store = std::make_unique<encoders::BackendTensors>(ops_, DType::f32);
    b.rows = b.store->make(rows, width_);
  }
  return b.rows.rows_range(0, rows);
}

}  // namespace emb
