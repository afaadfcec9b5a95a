#include "encoders/common/scratch_pool.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace emb::encoders {

ScratchPool::ScratchPool(Ops& ops, DType dtype) : ops_(ops), dtype_(dtype) {
  EMB_ASSERT(dtype == DType::f32 || dtype == DType::bf16);
}

ScratchPool::~ScratchPool() {
  for (const Buffer& b : buffers_) ops_.deallocate(b.data);
}

View ScratchPool::make(int64_t rows, int64_t cols) { return make(rows, cols, dtype_); }

View ScratchPool::make(int64_t rows, int64_t cols, DType dtype) {
  const size_t bytes = std::max<size_t>(1, size_t(rows * cols) * dtype_size(dtype));
  Buffer* best = nullptr;
  for (Buffer& b : buffers_)
    if (!b.used && b.bytes >= bytes && (!best || b.bytes < best->bytes)) best = &b;
  if (!best) {
    buffers_.push_back({ops_.allocate(bytes), bytes, false});
    best = &buffers_.back();
  }
  best->used = true;
  return View{best->data, dtype, rows, cols, cols};
}

void ScratchPool::recycle() {
  for (Buffer& b : buffers_) b.used = false;
}

int64_t ScratchPool::bytes() const {
  int64_t total = 0;
  for (const Buffer& b : buffers_) total += int64_t(b.bytes);
  return total;
}

}  // namespace emb::encoders
