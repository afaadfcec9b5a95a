#include "rl/backoff.hpp"

#include <algorithm>
#include <thread>

namespace emb {

void Backoff::wait() {
  std::this_thread::sleep_for(std::chrono::microseconds(sleep_us_));
  sleep_us_ = std::min(2 * sleep_us_, kLastUs);
}

}  // namespace emb
