// Device: owns memory and the ordering of work on one accelerator (DESIGN.md "Backends").
// Kernels take raw views; the Device says where those views live. The CPU device is the
// reference; the CUDA device (built when EMBTRAIN_WITH_CUDA) allocates with cudaMalloc and
// orders work on one compute stream.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>

namespace emb {

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  virtual bool is_host() const = 0;
  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* ptr) = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  // Waits for all work queued on the device.
  virtual void synchronize() = 0;
  size_t bytes_in_use() const { return in_use_; }
  size_t peak_bytes() const { return peak_; }

 protected:
  // Bookkeeping shared by the backends: remember each live allocation's size.
  void remember(void* ptr, size_t bytes);
  // The size of a live allocation, which is forgotten; an unknown pointer is a bug.
  size_t forget(void* ptr);
  const std::unordered_map<void*, size_t>& live() const { return sizes_; }

 private:
  std::unordered_map<void*, size_t> sizes_;
  size_t in_use_ = 0, peak_ = 0;
};

// kind "cpu" or "cuda"; a CUDA device is chosen from the local rank (one GPU per rank).
std::unique_ptr<Device> make_device(const std::string& kind, int local_rank);
// Number of CUDA devices visible to this process (0 without the CUDA backend or a GPU).
int cuda_device_count();

}  // namespace emb
