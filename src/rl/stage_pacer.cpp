#include "rl/stage_pacer.hpp"

#include <thread>

namespace emb {

double StagePacer::finish(double modelled_s) {
  const Clock::time_point computed = Clock::now();
  const double real = std::chrono::duration<double>(computed - started_).count();
  stages_ += 1, real_s_ += real, modelled_s_ += modelled_s;
  if (!on_) return real;
  if (real > modelled_s) overruns_ += 1, overrun_s_ += real - modelled_s;
  if (real < modelled_s) {
    std::this_thread::sleep_until(started_ + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(modelled_s)));
    slept_s_ += std::chrono::duration<double>(Clock::now() - computed).count();
  }
  return std::chrono::duration<double>(Clock::now() - started_).count();
}

}  // namespace emb
