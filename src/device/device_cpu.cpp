#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "device/device.hpp"

namespace emb {

void Device::remember(void* ptr, size_t bytes) {
  sizes_[ptr] = bytes;
  in_use_ += bytes;
  if (in_use_ > peak_) peak_ = in_use_;
}

size_t Device::forget(void* ptr) {
  auto it = sizes_.find(ptr);
  EMB_ASSERT(it != sizes_.end());
  const size_t bytes = it->second;
  sizes_.erase(it);
  in_use_ -= bytes;
  return bytes;
}

namespace {

class CpuDevice final : public Device {
 public:
  std::string name() const override { return "cpu"; }
  bool is_host() const override { return true; }
  void* alloc(size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) & ~size_t(63));
    EMB_CHECK(p || bytes == 0, "cpu device: cannot allocate ", bytes, " bytes");
    remember(p, bytes);
    return p;
  }
  void free(void* ptr) override {
    if (!ptr) return;
    forget(ptr);
    std::free(ptr);
  }
  void copy_to_device(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize() override {}
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace emb
