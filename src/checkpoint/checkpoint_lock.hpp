// The exclusive lock a training run holds on its checkpoint directory, so that two runs
// never write into one directory at once (their files would interleave). Rank 0 holds an
// flock(2) on <dir>/.lock for the whole run and writes "pid host start-time run-id" into it;
// the kernel releases the lock when the process ends however it ends (exit, MPI_Abort,
// SIGKILL), so a lock left by a dead process is no obstacle: the next run takes it over
// and says so. A second run finds the lock held and stops before step 1 with one line
// naming the holder. (On a parallel file system the lock needs flock support: Lustre's
// `flock` mount option; NFS emulates it with byte-range locks.) A run that fails leaves no
// lock behind, nor the directory when it created it and wrote nothing there (discard).
#pragma once
#include <mpi.h>

#include <string>

namespace emb {

class CheckpointLock {
 public:
  // Collective: rank 0 creates dir when needed and takes the lock; every rank throws the
  // same emb::Error when the lock is held by another process.
  CheckpointLock(MPI_Comm comm, const std::string& dir, const std::string& run_id);
  // Empties the lock file and releases the lock; while an exception unwinds the stack (the
  // run failed) it discards instead.
  ~CheckpointLock();
  CheckpointLock(const CheckpointLock&) = delete;
  CheckpointLock& operator=(const CheckpointLock&) = delete;

  // What a failed run does before it ends (any rank may, any number of times): removes the
  // lock file, then the directories this lock created (the checkpoint directory and the
  // parents it needed, deepest first) while they are empty; checkpoints already written stay.
  void discard() const;

 private:
  std::string dir_, path_;
  std::string top_created_;     // the shallowest directory the constructor made, "" for none (every rank)
  int fd_ = -1;                 // rank 0 only
  int unwinding_at_start_ = 0;  // std::uncaught_exceptions() when constructed
};

}  // namespace emb
