// An Ops that counts the calls made through it and forwards each to another backend: the
// planner's op-call count (src/plan/op_calls.hpp) checked against the calls a real step makes.
// Every op is counted under its name (kernels/observed_ops.hpp: memory and ordering calls are
// not ops), and the bytes allocated and not yet freed are tracked.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "kernels/observed_ops.hpp"

namespace emb::test {

class CountingOps final : public ObservedOps {
 public:
  explicit CountingOps(Ops& inner) : ObservedOps(inner) {}

  // Op calls since the last reset, all ops together and by name.
  int64_t total() const {
    int64_t n = 0;
    for (const auto& [name, calls] : calls_) n += calls;
    return n;
  }
  const std::map<std::string, int64_t>& by_name() const { return calls_; }
  void reset() { calls_.clear(); }
  // Bytes allocated through this Ops and not freed yet.
  int64_t live_bytes() const { return live_bytes_; }

  void* allocate(size_t bytes) override {
    void* p = ObservedOps::allocate(bytes);
    sizes_[p] = int64_t(bytes), live_bytes_ += int64_t(bytes);
    return p;
  }
  void deallocate(void* p) override {
    live_bytes_ -= sizes_[p];
    sizes_.erase(p);
    ObservedOps::deallocate(p);
  }

 private:
  void op_started(const char* op) override { ++calls_[op]; }
  void op_ended(const char*, double) override {}
  std::map<std::string, int64_t> calls_;
  std::map<void*, int64_t> sizes_;  // of each live allocation
  int64_t live_bytes_ = 0;
};

}  // namespace emb::test
