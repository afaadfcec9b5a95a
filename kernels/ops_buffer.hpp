// A flat array of n elements in an Ops backend's memory (device memory for CUDA), released with
// its owner: the trainer's parameters, gradients, optimizer moments and communication buffers
// live in these, so the step never touches them from the host. Uninitialised when made (zero
// it through Ops::zero); never copied (a backend allocation has one owner), movable.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/dtype.hpp"
#include "kernels/ops.hpp"

namespace emb {

template <class T>
class OpsBuffer {
 public:
  OpsBuffer() = default;
  OpsBuffer(Ops& ops, int64_t n) : ops_(&ops), n_(n), data_(static_cast<T*>(ops.allocate(size_t(n) * sizeof(T)))) {}
  ~OpsBuffer() { release(); }
  OpsBuffer(const OpsBuffer&) = delete;
  OpsBuffer& operator=(const OpsBuffer&) = delete;
  OpsBuffer(OpsBuffer&& o) noexcept { *this = std::move(o); }
  OpsBuffer& operator=(OpsBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ops_ = std::exchange(o.ops_, nullptr), n_ = std::exchange(o.n_, 0), data_ = std::exchange(o.data_, nullptr);
    }
    return *this;
  }

  T* data() const { return data_; }
  int64_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  // Elements [begin, begin + count) as one row [1, count] (the whole buffer by default).
  View view(int64_t begin, int64_t count) const {
    return View{data_ + begin, kDType, 1, count, count};
  }
  View view() const { return view(0, n_); }

 private:
  static constexpr DType kDType = sizeof(T) == 2 ? DType::bf16 : sizeof(T) == 8 ? DType::f64 : DType::f32;
  void release() {
    if (data_) ops_->deallocate(data_);
    data_ = nullptr;
  }

  Ops* ops_ = nullptr;
  int64_t n_ = 0;
  T* data_ = nullptr;
};

}  // namespace emb
