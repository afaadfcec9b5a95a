// Backend buffers recycled across repeated passes of an encoder (the chunks of a clip, the
// batches of a run): make() hands out an unused buffer of at least the bytes asked (the smallest
// such), or allocates one; recycle() makes every buffer unused again. After the first pass of a
// shape nothing is allocated (first-touching fresh pages costs ~10 µs per 4 KiB on the hosts
// MACHINE.md describes; a GPU allocation synchronises).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/ops.hpp"

namespace emb::encoders {

class ScratchPool {
 public:
  ScratchPool(Ops& ops, DType dtype);
  ~ScratchPool();
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;

  Ops& ops() const { return ops_; }
  DType dtype() const { return dtype_; }
  // An uninitialised contiguous [rows, cols] tensor of dtype() (or of `dtype`).
  View make(int64_t rows, int64_t cols);
  View make(int64_t rows, int64_t cols, DType dtype);
  // A [rows, cols] tensor of dtype() holding `values` (row-major fp32 on the host).
  View upload(const float* values, int64_t rows, int64_t cols);
  // int32 indices in backend memory holding `host`.
  RowIndex index(const std::vector<int32_t>& host);
  // Every buffer unused again (the views and indices handed out must no longer be read).
  void recycle();
  // Bytes held in backend memory.
  int64_t bytes() const;

 private:
  // An unused buffer of at least `bytes` (the smallest such), or a new one; marked used.
  void* take(size_t bytes);

  struct Buffer {
    void* data;
    size_t bytes;
    bool used;
  };
  Ops& ops_;
  DType dtype_;
  std::vector<Buffer> buffers_;
};

}  // namespace emb::encoders
