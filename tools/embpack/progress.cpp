#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace emb {

Progress::Progress(std::string label, int64_t total, bool forced, bool allowed)
    : label_(std::move(label)), total_(total), enabled_(allowed && (forced || isatty(STDERR_FILENO))) {}

Progress::~Progress() {
  if (!enabled_) return;
  done_ = total_;
  draw();
  std::fputc('\n', stderr);
}

void Progress::advance(int64_t n) {
  done_ += n;
  auto now = std::chrono::steady_clock::now();
  if (enabled_ && now - last_draw_ > std::chrono::milliseconds(200)) {
    last_draw_ = now;
    draw();
  }
}

void Progress::draw() {
  constexpr int kWidth = 40;
  int filled = total_ > 0 ? int(kWidth * done_ / total_) : kWidth;
  std::string bar(size_t(filled), '#');
  bar.resize(kWidth, '.');
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? double(done_) / elapsed : 0;
  std::string eta = "--";
  if (rate > 0) {
    const long long left = (long long)(double(total_ - done_) / rate + 0.5);
    eta = left >= 3600 ? std::to_string(left / 3600) + "h" + std::to_string(left / 60 % 60) + "m"
                       : std::to_string(left / 60) + "m" + std::to_string(left % 60) + "s";
  }
  std::fprintf(stderr, "\r%s [%s] %lld/%lld %.1f/s ETA %s  ", label_.c_str(), bar.c_str(), (long long)done_,
               (long long)total_, rate, eta.c_str());
  std::fflush(stderr);
}

}  // namespace emb
