// A one-line progress bar on stderr for long conversions (done/total, rate, ETA), shown only when stderr is a
// terminal or when asked for (--progress), so logs and tests stay clean; never when not
// `allowed` (the ranks other than 0 of a parallel conversion).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace emb {

class Progress {
 public:
  Progress(std::string label, int64_t total, bool forced, bool allowed = true);
  ~Progress();
  void advance(int64_t n = 1);

 private:
  void draw();
  std::string label_;
  int64_t total_, done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_draw_;
};

}  // namespace emb
