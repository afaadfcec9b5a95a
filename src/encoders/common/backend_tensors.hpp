// Tensors of a frozen encoder in an Ops backend's memory (device memory for CUDA), in one storage
// dtype (fp32, or bf16 on a backend with bf16 data), owned together and released together.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/ops.hpp"

namespace emb::encoders {

class BackendTensors {
 public:
  BackendTensors(Ops& ops, DType dtype);
  ~BackendTensors();
  BackendTensors(const BackendTensors&) = delete;
  BackendTensors& operator=(const BackendTensors&) = delete;

  Ops& ops() const { return ops_; }
  DType dtype() const { return dtype_; }
  // An uninitialised [rows, cols] tensor.
  View make(int64_t rows, int64_t cols);
  // A [rows, cols] tensor holding `values` (row-major fp32 on the host), converted to dtype().
  View upload(const float* values, int64_t rows, int64_t cols);
  // Rows [row0, row0 + rows) of `into` (contiguous) set from host fp32 values.
  void upload_rows(const View& into, int64_t row0, const float* values, int64_t rows);
  // Bytes held in backend memory.
  int64_t bytes() const { return bytes_; }

 private:
  Ops& ops_;
  DType dtype_;
  std::vector<void*> allocations_;
  int64_t bytes_ = 0;
};

// int32 indices in backend memory, released with their owner.
class BackendIndex {
 public:
  BackendIndex(Ops& ops, const std::vector<int32_t>& host);
  ~BackendIndex();
  BackendIndex(const BackendIndex&) = delete;
  BackendIndex& operator=(const BackendIndex&) = delete;
  const int32_t* data() const { return data_; }
  RowIndex rows() const { return {data_, n_}; }

 private:
  Ops& ops_;
  int32_t* data_ = nullptr;
  int64_t n_ = 0;
};

// Backend memory as host fp32 values (waits for the backend).
std::vector<float> download(Ops& ops, const View& v);
// Rows [row0, row0 + rows) of `into` (contiguous, fp32 or bf16) set from host fp32 values.
void upload_rows(Ops& ops, const View& into, int64_t row0, const float* values, int64_t rows);

}  // namespace emb::encoders
