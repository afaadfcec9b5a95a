#include "core/timer.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>

#include "core/activity.hpp"
#include "core/error.hpp"

namespace emb {

const char* phase_name(Phase p) {
  static const char* names[kNumPhases] = {"init", "data_wait", "h2d", "fwd", "bwd", "comm_exposed",
                                          "comm_total", "optim", "ckpt", "step", "backbone", "encoders", "other"};
  return names[int(p)];
}

void PhaseTimers::start(Phase p) {
  // Re-entering a running phase (recursion) keeps the outer start: time is counted once.
  if (depth_[int(p)]++ != 0) return;
  phase_ranges_[size_t(p)].start(phase_name(p));
  started_[int(p)] = Clock::now();
  if (on_device(p)) device_started_[int(p)] = device_clock_->mark();
  running_.push_back(p);
  publish_activity();
}

void PhaseTimers::publish_activity() const {
  // The step being timed is the one after the last recorded (end_step(first - 1) closes init).
  set_current_phase(running_.empty() ? nullptr : phase_name(running_.back()),
                    records_.empty() ? -1 : records_.back().step + 1);
}

void PhaseTimers::stop(Phase p) {
  EMB_ASSERT(depth_[int(p)] > 0);
  if (--depth_[int(p)] != 0) return;
  const Clock::time_point now = Clock::now();
  for (size_t i = running_.size(); i-- > 0;)
    if (running_[i] == p) {
      running_.erase(running_.begin() + std::ptrdiff_t(i));
      break;
    }
  publish_activity();
  phase_ranges_[size_t(p)].end();
  if (on_device(p))
    device_spans_.push_back({p, device_started_[int(p)], device_clock_->mark()});
  else
    current_.seconds[int(p)] += std::chrono::duration<double>(now - started_[int(p)]).count();
  if (trace_) trace_->phase(phase_name(p), started_[int(p)], now, records_.empty() ? 0 : records_.back().step + 1);
}

void PhaseTimers::add_wait(Phase p, double seconds) {
  current_.seconds[int(p)] += seconds;
  for (size_t i = running_.size(); i-- > 0;)
    if (running_[i] != Phase::step && running_[i] != p) {
      if (!on_device(running_[i])) current_.seconds[int(running_[i])] -= seconds;
      return;
    }
}

void PhaseTimers::move(Phase from, Phase to, double seconds) {
  if (!on_device(from)) current_.seconds[int(from)] -= seconds;
  current_.seconds[int(to)] += seconds;
}

void PhaseTimers::mark_unit(int unit, bool backward) {
  if (!nvtx::kEnabled) return;
  if (unit < 0) {
    unit_range_.end();
    return;
  }
  char name[32];
  std::snprintf(name, sizeof name, "unit %d %s", unit, backward ? "bwd" : "fwd");
  unit_range_.start(name);
}

void PhaseTimers::end_step(int64_t step) {
  for (const DeviceSpan& s : device_spans_) current_.seconds[int(s.phase)] += device_clock_->seconds_between(s.from, s.to);
  device_spans_.clear();
  if (device_clock_) device_clock_->reset();
  double parts = 0;
  for (Phase p : kStepParts) parts += p == Phase::other ? 0.0 : current_.seconds[int(p)];
  current_.seconds[int(Phase::other)] = std::max(0.0, current_.seconds[int(Phase::step)] - parts);
  current_.step = step;
  records_.push_back(current_);
  if (trace_) {
    for (int p = 0; p < kNumPhases; ++p) trace_->timing(step, phase_name(Phase(p)), current_.seconds[size_t(p)]);
    trace_->end_step();
  }
  current_ = StepTimes{};
}

}  // namespace emb
