// The model's input slots on a GPU (kernels/input_slots.hpp): pinned host staging, a device
// buffer per slot, copies on a copy stream of their own. Per slot two events order it without
// host waits: `copied` (copy stream, after the slot's copy; the compute stream waits on it
// before the micro-batch's first op) and `consumed` (compute stream, recorded when the next
// slot is staged, i.e. after every op of the micro-batch that read this slot; the slot's next
// copy waits on it). The host waits only to refill pinned memory whose copy has not run yet,
// which in the steady state finished a micro-batch earlier.
#pragma once
#include <cuda_runtime_api.h>

#include <utility>
#include <vector>

#include "kernels/cuda/event_clock.hpp"
#include "kernels/input_slots.hpp"

namespace emb {

class DeviceMemory;

class CudaInputSlots final : public InputSlots {
 public:
  // compute: the stream the ops run on; memory: where the device buffers are counted.
  CudaInputSlots(cudaStream_t compute, DeviceMemory& memory);
  ~CudaInputSlots() override;
  CudaInputSlots(const CudaInputSlots&) = delete;
  CudaInputSlots& operator=(const CudaInputSlots&) = delete;

  Slot stage(size_t bytes) override;
  void upload(size_t bytes) override;
  double take_copy_wait_seconds() override;
  cudaStream_t copy_stream() const { return copy_; }

 private:
  struct Buffers {
    void* host = nullptr;  // pinned
    void* device = nullptr;
    size_t capacity = 0;
    cudaEvent_t copied = nullptr, consumed = nullptr;
    bool copy_issued = false, consumed_recorded = false;
  };
  // The compute stream's waits not yet read, folded into seconds past this many (a caller that
  // never takes them, e.g. closed-loop evaluation, must not grow the event pool without bound).
  static constexpr size_t kMaxUnreadWaits = 256;
  double read_waits();

  cudaStream_t compute_, copy_ = nullptr;
  DeviceMemory& memory_;
  Buffers slots_[kSlots];
  int current_ = kSlots - 1;
  bool staged_any_ = false;
  cuda::EventClock wait_clock_;                  // marks on the compute stream around each wait
  std::vector<std::pair<int, int>> waits_;       // (before, after) marks
  double folded_seconds_ = 0;
};

}  // namespace emb
