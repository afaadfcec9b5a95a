// The phase timers' device clock on one CUDA stream (core/device_clock.hpp): a mark is a
// cudaEvent recorded on the stream, from a pool that grows to the most marks one step takes
// and is reused after reset().
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "core/device_clock.hpp"

namespace emb::cuda {

class EventClock final : public DeviceClock {
 public:
  explicit EventClock(cudaStream_t stream) : stream_(stream) {}
  ~EventClock() override;
  EventClock(const EventClock&) = delete;
  EventClock& operator=(const EventClock&) = delete;

  int mark() override;
  double seconds_between(int from, int to) override;
  void reset() override { used_ = 0; }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;
  int used_ = 0;
};

}  // namespace emb::cuda
