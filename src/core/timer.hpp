// Phase timers (DESIGN.md "Timers and outputs"). Each rank accumulates wall seconds per
// phase within a step. The step's phases do not overlap: a wait inside a running phase (a
// collective's wait inside fwd or bwd, the micro-batch's upload inside fwd) is counted in its
// own phase and taken out of the one around it, and `other` is the step's time in no other
// phase (the blocking host reductions, the loop's own work), so the step's phases (kStepParts)
// sum to the step. With a device clock (a GPU) fwd, bwd and optim are the stream's spans, from
// which host waits are not taken. comm_total is the collectives' own time, partly hidden under
// fwd and bwd: not a part of the step. Cheap enough to leave on: one steady_clock read at each
// boundary, no allocation in the steady state.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/device_clock.hpp"
#include "core/nvtx.hpp"
#include "core/run_trace.hpp"

namespace emb {

// backbone: model.backbone = online, the frozen Eagle forward that makes the step's vl features.
// encoders: model.encoders = online, DreamZero's frozen VAE, umT5 and CLIP forwards that make the
// step's latents, I2V y, text and image context.
enum class Phase : int { init, data_wait, h2d, fwd, bwd, comm_exposed, comm_total, optim, ckpt, step, backbone, encoders,
                         other, count };
constexpr int kNumPhases = int(Phase::count);
const char* phase_name(Phase p);
// The phases a step's wall time is divided into: they sum to Phase::step.
constexpr Phase kStepParts[] = {Phase::data_wait, Phase::backbone, Phase::encoders, Phase::h2d, Phase::fwd,
                                Phase::bwd, Phase::comm_exposed, Phase::optim, Phase::other};

struct StepTimes {
  int64_t step = 0;
  std::array<double, kNumPhases> seconds{};
};

class PhaseTimers {
 public:
  using Clock = std::chrono::steady_clock;

  PhaseTimers() { records_.reserve(1024), device_spans_.reserve(64), running_.reserve(kNumPhases); }
  void start(Phase p);
  void stop(Phase p);
  // Adds time measured elsewhere that is no part of the running phases' wall time (the
  // collectives' issue-to-completion time, comm_total).
  void add(Phase p, double seconds) { current_.seconds[int(p)] += seconds; }
  // A wait of `seconds` that just ended inside the running phases: counted in `p` and taken out
  // of the innermost running part of the step (fwd or bwd around a collective's wait).
  void add_wait(Phase p, double seconds);
  // Seconds timed inside `from` that belong to `to` (the micro-batch's upload, timed by the
  // model inside fwd, is h2d).
  void move(Phase from, Phase to, double seconds);
  double current(Phase p) const { return current_.seconds[int(p)]; }
  // The phase started last of those running (Phase::step between its parts); other when none is.
  Phase running() const { return running_.empty() ? Phase::other : running_.back(); }
  // Closes the step: records its times under `step` (other: the step beyond its other parts)
  // and starts a fresh one.
  void end_step(int64_t step);
  // NVTX (CUDA builds): the range of model unit `unit` in forward or backward, ending the
  // previous unit's; -1 ends it. Phases get their ranges from start/stop.
  void mark_unit(int unit, bool backward);
  // Where phases, units and collectives stream to as the run goes (null: nowhere).
  void set_trace(RunTrace* trace) { trace_ = trace; }
  RunTrace* trace() const { return trace_; }
  // Times fwd, bwd and optim on the device's clock from now on (null: the host's); the trace
  // keeps their host spans (when the host queued them).
  void set_device_clock(DeviceClock* clock) { device_clock_ = clock; }
  const std::vector<StepTimes>& records() const { return records_; }

 private:
  bool on_device(Phase p) const {
    return device_clock_ && (p == Phase::fwd || p == Phase::bwd || p == Phase::optim);
  }

  std::array<Clock::time_point, kNumPhases> started_{};
  std::array<int, kNumPhases> depth_{};
  DeviceClock* device_clock_ = nullptr;
  std::array<int, kNumPhases> device_started_{};  // the device mark at the phase's start
  struct DeviceSpan {
    Phase phase;
    int from, to;
  };
  std::vector<DeviceSpan> device_spans_;  // this step's, read at end_step
  // The running phases in the order they started: the last is the current activity
  // (core/activity.hpp) that an out-of-memory error names.
  std::vector<Phase> running_;
  void publish_activity() const;
  StepTimes current_;
  std::vector<StepTimes> records_;
  RunTrace* trace_ = nullptr;
  std::array<nvtx::Span, kNumPhases> phase_ranges_;
  nvtx::Span unit_range_;
};

// RAII: times a scope as phase `p`.
class ScopedPhase {
 public:
  ScopedPhase(PhaseTimers& t, Phase p) : timers_(t), phase_(p) { timers_.start(p); }
  ~ScopedPhase() { timers_.stop(phase_); }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseTimers& timers_;
  Phase phase_;
};

inline double seconds_since(PhaseTimers::Clock::time_point t0) {
  return std::chrono::duration<double>(PhaseTimers::Clock::now() - t0).count();
}

}  // namespace emb
