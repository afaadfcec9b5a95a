#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

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
  std::fprintf(stderr, "\r%s [%s] %lld/%lld", label_.c_str(), bar.c_str(), (long long)done_, (long long)total_);
  std::fflush(stderr);
}

}  // namespace emb
