// An output file that appears only when complete: everything is written to "<out>.tmp",
// commit() renames it to <out>, and destruction without commit (an error) removes it.
// Of the ranks writing one file only the owner (rank 0) removes or renames it.
//
// The owner also holds, from construction to commit, an exclusive lock on "<out>.lock"
// (removed after; it names the holder) so that two embpack jobs never write one output at
// once, and an exclusive lock on an existing <out> so that a file a training run reads (it
// holds a shared lock, app/data_read_locks.hpp) is never replaced under it: either refuses
// with one line (exit 2) before anything is written.
#pragma once
#include <mpi.h>

#include <string>

#include "core/file_lock.hpp"

namespace emb {

class TempOutput {
 public:
  // Collective over comm (MPI_COMM_NULL: this process alone): every rank throws the owner's
  // refusal alike.
  TempOutput(std::string out, MPI_Comm comm, bool owner);
  ~TempOutput();
  TempOutput(const TempOutput&) = delete;
  TempOutput& operator=(const TempOutput&) = delete;
  const std::string& temp_path() const { return temp_; }
  void commit();

 private:
  void lock_output();

  std::string out_, temp_;
  bool owner_ = true;
  bool committed_ = false;
  FileLock writer_lock_, replaced_lock_;  // owner only: <out>.lock, and <out> when it exists
};

}  // namespace emb
