#include "kernels/cuda/cuda_input_slots.hpp"

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_ops.hpp"

namespace emb {

using cuda::check_cuda;

CudaInputSlots::CudaInputSlots(cudaStream_t compute, DeviceMemory& memory)
    : compute_(compute), memory_(memory), wait_clock_(compute) {
  check_cuda(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking), "input slots: copy stream");
  for (Buffers& b : slots_) {
    check_cuda(cudaEventCreateWithFlags(&b.copied, cudaEventDisableTiming), "input slots: event");
    check_cuda(cudaEventCreateWithFlags(&b.consumed, cudaEventDisableTiming), "input slots: event");
  }
}

CudaInputSlots::~CudaInputSlots() {
  // Errors cannot be thrown here; the run already ended or failed.
  cudaStreamSynchronize(copy_);
  cudaStreamSynchronize(compute_);
  for (Buffers& b : slots_) {
    cudaEventDestroy(b.copied);
    cudaEventDestroy(b.consumed);
    if (b.host) cudaFreeHost(b.host);
    try {
      memory_.release(b.device);
    } catch (const std::exception&) {
    }
  }
  cudaStreamDestroy(copy_);
}

InputSlots::Slot CudaInputSlots::stage(size_t bytes) {
  if (staged_any_) {  // every op that reads the current slot has been issued
    Buffers& previous = slots_[current_];
    check_cuda(cudaEventRecord(previous.consumed, compute_), "input slots: record consumed");
    previous.consumed_recorded = true;
  }
  staged_any_ = true;
  current_ = (current_ + 1) % kSlots;
  Buffers& b = slots_[current_];
  if (b.copy_issued) check_cuda(cudaEventSynchronize(b.copied), "input slots: wait for the slot's last copy");
  if (bytes > b.capacity) {  // grows by half again: a slowly growing batch reallocates rarely
    if (b.consumed_recorded) check_cuda(cudaEventSynchronize(b.consumed), "input slots: wait for the slot's readers");
    if (b.host) check_cuda(cudaFreeHost(b.host), "input slots: free pinned memory");
    b.host = nullptr;
    memory_.release(b.device);
    b.device = nullptr;
    b.capacity = 0;
    const size_t capacity = bytes + bytes / 2;
    b.device = memory_.allocate(capacity, "input batch (device copy)");
    check_cuda(cudaMallocHost(&b.host, capacity), "input slots: pinned memory");
    b.capacity = capacity;
  }
  return {b.host, b.device};
}

void CudaInputSlots::upload(size_t bytes) {
  Buffers& b = slots_[current_];
  if (b.consumed_recorded) check_cuda(cudaStreamWaitEvent(copy_, b.consumed, 0), "input slots: copy after readers");
  if (bytes)
    check_cuda(cudaMemcpyAsync(b.device, b.host, bytes, cudaMemcpyHostToDevice, copy_), "input slots: copy");
  check_cuda(cudaEventRecord(b.copied, copy_), "input slots: record copied");
  b.copy_issued = true;
  if (waits_.size() == kMaxUnreadWaits) folded_seconds_ += read_waits();
  const int before = wait_clock_.mark();
  check_cuda(cudaStreamWaitEvent(compute_, b.copied, 0), "input slots: compute after the copy");
  waits_.emplace_back(before, wait_clock_.mark());
}

double CudaInputSlots::read_waits() {
  double seconds = 0;
  for (const auto& [before, after] : waits_) seconds += wait_clock_.seconds_between(before, after);
  waits_.clear();
  wait_clock_.reset();
  return seconds;
}

double CudaInputSlots::take_copy_wait_seconds() {
  const double seconds = folded_seconds_ + read_waits();
  folded_seconds_ = 0;
  return seconds;
}

}  // namespace emb
