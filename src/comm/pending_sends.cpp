#include "comm/pending_sends.hpp"

#include <mutex>

namespace emb {
namespace {

// Buffers of sends abandoned at destruction: deliberately never freed (see ~PendingSends).
void keep_forever(std::shared_ptr<const void> owner) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<const void>>;
  std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(std::move(owner));
}

}  // namespace

PendingSends::~PendingSends() {
  progress();
  for (Send& s : sends_) {
    MPI_Request_free(&s.request);
    if (s.owner) keep_forever(std::move(s.owner));
  }
}

void PendingSends::start(const void* data, int bytes, std::shared_ptr<const void> owner, int dest, int tag,
                         MPI_Comm comm) {
  Send s{MPI_REQUEST_NULL, std::move(owner)};
  MPI_Isend(data, bytes, MPI_BYTE, dest, tag, comm, &s.request);
  sends_.push_back(std::move(s));
}

void PendingSends::progress() {
  size_t kept = 0;
  for (size_t i = 0; i < sends_.size(); ++i) {
    int done = 0;
    MPI_Test(&sends_[i].request, &done, MPI_STATUS_IGNORE);
    if (done) continue;
    if (kept != i) sends_[kept] = std::move(sends_[i]);
    ++kept;
  }
  sends_.erase(sends_.begin() + long(kept), sends_.end());
}

}  // namespace emb
