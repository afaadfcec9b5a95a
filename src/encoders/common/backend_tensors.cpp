#include "encoders/common/backend_tensors.hpp"

#include <cstring>

#include "core/error.hpp"

namespace emb::encoders {

BackendTensors::BackendTensors(Ops& ops, DType dtype) : ops_(ops), dtype_(dtype) {
  EMB_ASSERT(dtype == DType::f32 || dtype == DType::bf16);
}

BackendTensors::~BackendTensors() {
  for (void* p : allocations_) ops_.deallocate(p);
}

View BackendTensors::make(int64_t rows, int64_t cols) {
  const size_t bytes = size_t(rows * cols) * dtype_size(dtype_);
  void* p = ops_.allocate(bytes ? bytes : 1);
  allocations_.push_back(p);
  bytes_ += int64_t(bytes);
  return View{p, dtype_, rows, cols, cols};
}

void BackendTensors::upload_rows(const View& into, int64_t row0, const float* values, int64_t rows) {
  EMB_ASSERT(into.dtype == dtype_);
  encoders::upload_rows(ops_, into, row0, values, rows);
}

void upload_rows(Ops& ops, const View& into, int64_t row0, const float* values, int64_t rows) {
  EMB_ASSERT(into.contiguous() && row0 + rows <= into.rows);
  const int64_t n = rows * into.cols;
  char* dst = static_cast<char*>(into.data) + size_t(row0 * into.cols) * dtype_size(into.dtype);
  if (into.dtype == DType::f32) {
    ops.upload(dst, values, size_t(n) * sizeof(float));
    return;
  }
  std::vector<bf16> converted(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) converted[size_t(i)] = to_bf16(values[i]);
  ops.upload(dst, converted.data(), size_t(n) * sizeof(bf16));
}

View BackendTensors::upload(const float* values, int64_t rows, int64_t cols) {
  const View v = make(rows, cols);
  upload_rows(v, 0, values, rows);
  return v;
}

BackendIndex::BackendIndex(Ops& ops, const std::vector<int32_t>& host) : ops_(ops), n_(int64_t(host.size())) {
  data_ = static_cast<int32_t*>(ops.allocate(host.size() * sizeof(int32_t) + sizeof(int32_t)));
  ops.upload(data_, host.data(), host.size() * sizeof(int32_t));
}

BackendIndex::~BackendIndex() { ops_.deallocate(data_); }

std::vector<float> download(Ops& ops, const View& v) {
  EMB_ASSERT(v.contiguous());
  std::vector<float> out(static_cast<size_t>(v.size()));
  if (v.dtype == DType::f32) {
    ops.download(out.data(), v.data, out.size() * sizeof(float));
    return out;
  }
  std::vector<bf16> raw(out.size());
  ops.download(raw.data(), v.data, raw.size() * sizeof(bf16));
  for (size_t i = 0; i < out.size(); ++i) out[i] = to_float(raw[i]);
  return out;
}

}  // namespace emb::encoders
