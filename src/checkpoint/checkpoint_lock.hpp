// The exclusive lock a training run holds on its checkpoint directory, so that two runs
// never write into one directory at once (their files would interleave). Rank 0 holds an
// flock(2) on <dir>/.lock for the whole run and writes "pid host start-time run-id" into it;
// the kernel releases the lock when the process ends however it ends (exit, MPI_Abort,
// SIGKILL), so a lock left by a dead process is no obstacle: the next run takes it over
// and says so. A second run finds the lock held and stops before step 1 with one line
// naming the holder. (On a parallel file system the lock needs flock support: Lustre's
// `flock` mount option; NFS emulates it with byte-range locks.)
#pragma once
#include <mpi.h>

#include <string>

namespace emb {

class CheckpointLock {
 public:
  // Collective: rank 0 creates dir when needed and takes the lock; every rank throws the
  // same emb::Error when the lock is held by another process.
  CheckpointLock(MPI_Comm comm, const std::string& dir, const std::string& run_id);
  ~CheckpointLock();  // empties the lock file and releases the lock
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;  // rank 0 only
};

}  // namespace emb
