#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/event_clock.hpp"

namespace emb::cuda {

EventClock::~EventClock() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

int EventClock::mark() {
  if (used_ == int(events_.size())) {
    cudaEvent_t e = nullptr;
    check_cuda(cudaEventCreate(&e), "EventClock: create an event");
    events_.push_back(e);
  }
  // Inside a graph capture the record becomes a node of the graph (external), so the mark is
  // taken when the graph runs.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check_cuda(cudaStreamIsCapturing(stream_, &capture), "EventClock: capture status");
  check_cuda(cudaEventRecordWithFlags(events_[size_t(used_)], stream_,
                                      capture == cudaStreamCaptureStatusNone ? cudaEventRecordDefault
                                                                             : cudaEventRecordExternal),
             "EventClock: record");
  return used_++;
}

double EventClock::seconds_between(int from, int to) {
  EMB_ASSERT(from >= 0 && to < used_);
  check_cuda(cudaEventSynchronize(events_[size_t(to)]), "EventClock: wait");
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, events_[size_t(from)], events_[size_t(to)]), "EventClock: elapsed time");
  return double(ms) / 1e3;
}

}  // namespace emb::cuda
