// Carves a step's activations out of one emb::Arena. The same layout code runs twice: first
// measuring (no arena: pointers are null, only the byte count grows), then allocating from an
// arena reserved to exactly that size, so the layout is written once and --plan can report
// activation memory for any shape without allocating it.
//
// Two storage types: the plan's activation dtype (bf16 where the model computes its blocks in
// bf16, model.precision = bf16 on a backend with mixed storage, else fp32) for the tensors a
// block's ops read and write as data, and fp32 for what stays wide beside bf16 data: the
// residual stream, per-row statistics and whatever is outside the blocks.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/arena.hpp"
#include "core/dtype.hpp"
#include "kernels/ops.hpp"

namespace emb {

// A tensor's first element in backend memory and its elements' storage type; its shape is the
// holder's (documented where it is declared), given per use by rows().
struct TensorPtr {
  void* data = nullptr;
  DType dtype = DType::f32;

  // The tensor as [n, cols] (contiguous).
  View rows(int64_t n, int64_t cols) const { return View{data, dtype, n, cols, cols}; }
  bool absent() const { return data == nullptr; }
};

class ActivationPlan {
 public:
  explicit ActivationPlan(Arena* arena, DType activations = DType::f32) : arena_(arena), activations_(activations) {}

  float* floats(int64_t n) { return static_cast<float*>(take_bytes(size_t(n) * sizeof(float))); }
  // n elements in the activation dtype.
  TensorPtr activations(int64_t n) { return TensorPtr{take_bytes(size_t(n) * dtype_size(activations_)), activations_}; }
  // n fp32 elements as a TensorPtr (a tensor that stays wide beside bf16 activations).
  TensorPtr wide(int64_t n) { return TensorPtr{floats(n), DType::f32}; }
  DType activation_dtype() const { return activations_; }
  size_t bytes() const { return bytes_; }

 private:
  void* take_bytes(size_t n) {
    const size_t bytes = (n + 63) & ~size_t(63);
    bytes_ += bytes;
    return arena_ ? arena_->alloc_bytes(bytes) : nullptr;
  }

  Arena* arena_;
  DType activations_;
  size_t bytes_ = 0;
};

}  // namespace emb
