#include "core/timer.hpp"

#include "core/error.hpp"

namespace emb {

const char* phase_name(Phase p) {
  static const char* names[kNumPhases] = {"init", "data_wait", "h2d", "fwd", "bwd", "comm_exposed",
                                          "comm_total", "optim", "ckpt", "step"};
  return names[int(p)];
}

void PhaseTimers::start(Phase p) {
  // Re-entering a running phase (recursion) keeps the outer start: time is counted once.
  if (depth_[int(p)]++ == 0) started_[int(p)] = Clock::now();
}

void PhaseTimers::stop(Phase p) {
  EMB_ASSERT(depth_[int(p)] > 0);
  if (--depth_[int(p)] == 0) current_.seconds[int(p)] += seconds_since(started_[int(p)]);
}

void PhaseTimers::end_step(int64_t step) {
  current_.step = step;
  records_.push_back(current_);
  current_ = StepTimes{};
}

}  // namespace emb
