#include "encoders/common/scratch_pool.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "encoders/common/backend_tensors.hpp"

namespace emb::encoders {

ScratchPool::ScratchPool(Ops& ops, DType dtype) : ops_(ops), dtype_(dtype) {
  EMB_ASSERT(dtype == DType::f32 || dtype == DType::bf16);
}

ScratchPool::~ScratchPool() {
  for (const Buffer& b : buffers_) ops_.deallocate(b.data);
}

View ScratchPool::make(int64_t rows, int64_t cols) { return make(rows, cols, dtype_); }

View ScratchPool::make(int64_t rows, int64_t cols, DType dtype) {
  return View{take(size_t(rows * cols) * dtype_size(dtype)), dtype, rows, cols, cols};
}

View ScratchPool::upload(const float* values, int64_t rows, int64_t cols) {
  const View v = make(rows, cols);
  upload_rows(ops_, v, 0, values, rows);
  return v;
}

RowIndex ScratchPool::index(const std::vector<int32_t>& host) {
  auto* data = static_cast<int32_t*>(take(host.size() * sizeof(int32_t)));
  ops_.upload(data, host.data(), host.size() * sizeof(int32_t));
  return RowIndex{data, int64_t(host.size())};
}

void* ScratchPool::take(size_t bytes) {
  bytes = std::max<size_t>(1, bytes);
  Buffer* best = nullptr;
  for (Buffer& b : buffers_)
    if (!b.used && b.bytes >= bytes && (!best || b.bytes < best->bytes)) best = &b;
  if (!best) {
    buffers_.push_back({ops_.allocate(bytes), bytes, false});
    best = &buffers_.back();
  }
  best->used = true;
  return best->data;
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
