// Non-blocking sends in flight, each with the buffer MPI reads from until the send completes.
// MPI may read a send buffer at any moment before completion (a large message goes out when
// the receiver asks for it), so the buffer lives as long as its request.
#pragma once
#include <mpi.h>

#include <memory>
#include <vector>

namespace emb {

class PendingSends {
 public:
  PendingSends() = default;
  PendingSends(PendingSends&&) = default;
  PendingSends& operator=(PendingSends&&) = delete;  // would drop requests still in flight
  PendingSends(const PendingSends&) = delete;
  PendingSends& operator=(const PendingSends&) = delete;
  // Never blocks: sends that have not completed (their receiver never took them, which
  // happens only when a rank stops on an error and the job is about to abort) are handed to
  // MPI with MPI_Request_free, and their buffers are kept for the rest of the process,
  // since MPI may still read them.
  ~PendingSends();

  // MPI_Isend of `bytes` bytes at `data`; `owner` keeps them alive (null for static data).
  void start(const void* data, int bytes, std::shared_ptr<const void> owner, int dest, int tag, MPI_Comm comm);
  // Completes the sends that have finished and releases their buffers.
  void progress();
  int size() const { return int(sends_.size()); }

 private:
  struct Send {
    MPI_Request request;
    std::shared_ptr<const void> owner;
  };
  std::vector<Send> sends_;
};

}  // namespace emb
