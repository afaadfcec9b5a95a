#include "rl/stage_pacer.hpp"

#include <thread>

#include "core/error.hpp"

namespace emb {

double StagePacer::finish(double modelled_s) {
  EMB_ASSERT(started_ != Clock::time_point{});  // begin() first, once per finish()
  const Clock::time_point computed = Clock::now(), started = started_;
  started_ = {};
  const double real = std::chrono::duration<double>(computed - started).count();
  stages_ += 1, real_s_ += real, modelled_s_ += modelled_s;
  if (!on_) return real;
  if (real > modelled_s) overruns_ += 1, overrun_s_ += real - modelled_s;
  if (real < modelled_s) {
    std::this_thread::sleep_until(started + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(modelled_s)));
    slept_s_ += std::chrono::duration<double>(Clock::now() - computed).count();
  }
  return std::chrono::duration<double>(Clock::now() - started).count();
}

}  // namespace emb
