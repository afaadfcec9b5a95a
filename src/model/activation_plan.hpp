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

// What a plan laid out: every byte; of them, the tensors in the activation dtype (the blocks'
// data, whose size the dtype decides), and the conversions (only with a narrow dtype); the
// rest is fp32 in any mode.
struct ActivationBytes {
  size_t total = 0;
  size_t in_activation_dtype = 0;
  size_t conversions = 0;
};

class ActivationPlan {
 public:
  explicit ActivationPlan(Arena* arena, DType activations = DType::f32) : arena_(arena), activations_(activations) {}

  float* floats(int64_t n) { return static_cast<float*>(take_bytes(size_t(n) * sizeof(float))); }
  // n elements in the activation dtype.
  TensorPtr activations(int64_t n) {
    return TensorPtr{take_bytes(size_t(n) * dtype_size(activations_), &activation_bytes_), activations_};
  }
  // n elements in a narrow activation dtype, absent with fp32: the blocks' copy of an fp32
  // tensor from outside them, or their narrow gradient of one before it is summed into it.
  TensorPtr conversion(int64_t n) {
    if (activations_ == DType::f32) return {};
    return TensorPtr{take_bytes(size_t(n) * dtype_size(activations_), &conversion_bytes_), activations_};
  }
  // n fp32 elements as a TensorPtr (a tensor that stays wide beside bf16 activations).
  TensorPtr wide(int64_t n) { return TensorPtr{floats(n), DType::f32}; }
  DType activation_dtype() const { return activations_; }
  size_t bytes() const { return bytes_; }
  ActivationBytes measured() const { return {bytes_, activation_bytes_, conversion_bytes_}; }

 private:
  // n bytes (rounded up to 64), counted in bytes_ and in `part` when given.
  void* take_bytes(size_t n, size_t* part = nullptr) {
    const size_t bytes = (n + 63) & ~size_t(63);
    bytes_ += bytes;
    if (part) *part += bytes;
    return arena_ ? arena_->alloc_bytes(bytes) : nullptr;
  }

  Arena* arena_;
  DType activations_;
  size_t bytes_ = 0;
  size_t activation_bytes_ = 0, conversion_bytes_ = 0;  // of bytes_, those of activations(), conversion()
};

}  // namespace emb
