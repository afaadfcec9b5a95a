#include "data/prefetcher.hpp"

#include <chrono>

namespace emb {

Prefetcher::Prefetcher(std::function<LoadedStep()> produce, int depth)
    : produce_(std::move(produce)), depth_(size_t(std::max(depth, 0))) {
  if (depth_ > 0) thread_ = std::thread([this] { run(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Prefetcher::run() {
  std::unique_lock<std::mutex> lock(m_);
  while (true) {
    cv_.wait(lock, [&] { return queue_.size() < depth_ || stop_; });
    if (queue_.size() >= depth_) return;  // stop requested with a full queue
    lock.unlock();
    try {
      LoadedStep step = produce_();
      lock.lock();
      queue_.push_back(std::move(step));
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      cv_.notify_all();
      return;
    }
    cv_.notify_all();
  }
}

LoadedStep Prefetcher::pop(double* waited) {
  auto start = std::chrono::steady_clock::now();
  LoadedStep step;
  if (depth_ == 0) {
    step = produce_();
  } else {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return !queue_.empty() || error_; });
    if (queue_.empty()) std::rethrow_exception(error_);
    step = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    cv_.notify_all();
  }
  if (waited) *waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return step;
}

void Prefetcher::quiesce() {
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return queue_.size() >= depth_ || error_; });
}

}  // namespace emb
