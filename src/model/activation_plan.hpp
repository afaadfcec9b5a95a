// Carves a step's activations out of one emb::Arena. The same layout code runs twice: first
// measuring (no arena: pointers are null, only the byte count grows), then allocating from an
// arena reserved to exactly that size, so the layout is written once and --plan can report
// activation memory for any shape without allocating it.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/arena.hpp"

namespace emb {

class ActivationPlan {
 public:
  explicit ActivationPlan(Arena* arena) : arena_(arena) {}

  template <class T>
  T* take(int64_t n) {
    size_t bytes = (size_t(n) * sizeof(T) + 63) & ~size_t(63);
    bytes_ += bytes;
    return arena_ ? static_cast<T*>(arena_->alloc_bytes(bytes)) : nullptr;
  }
  float* floats(int64_t n) { return take<float>(n); }
  size_t bytes() const { return bytes_; }

 private:
  Arena* arena_;
  size_t bytes_ = 0;
};

}  // namespace emb
