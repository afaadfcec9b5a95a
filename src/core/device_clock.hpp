// Device time for the phase timers (DESIGN.md "Timers"). On a GPU the host returns from a
// kernel launch long before the kernel has run, so a host clock around fwd, bwd and optim
// measures how long the host took to queue them. A DeviceClock queues timestamps on the
// device's compute stream and says how far apart two of them were once the device reached them
// (CUDA events); PhaseTimers reads them at the end of each step, after the step's one
// synchronisation, so timing adds no wait.
#pragma once

namespace emb {

class DeviceClock {
 public:
  virtual ~DeviceClock() = default;
  // Queues a timestamp on the compute stream; its handle is valid until reset().
  virtual int mark() = 0;
  // Device seconds from mark `from` to mark `to` (waits until the device reached `to`).
  virtual double seconds_between(int from, int to) = 0;
  // Forgets every mark; their storage is reused (nothing is allocated in the steady state).
  virtual void reset() = 0;
};

}  // namespace emb
