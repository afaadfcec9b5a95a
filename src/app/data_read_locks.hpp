// The shared locks a training run holds on its data files from start-up to exit, so that
// embpack never replaces a file a run reads (it takes the exclusive lock first:
// tools/embpack/temp_output.hpp), and a run never starts on a file embpack is replacing.
// Shared locks coexist: any number of runs read one file. See core/file_lock.hpp.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "core/file_lock.hpp"

namespace emb {

// A shared lock on one data file; throws emb::Error (exit 2) naming the file and the embpack
// holding it when embpack is replacing it.
FileLock lock_for_reading(const std::string& file);

class DataReadLocks {
 public:
  // Collective: every rank locks every file; when embpack holds one, every rank throws the
  // same emb::Error (exit 2) naming the file and the embpack holding it.
  DataReadLocks(MPI_Comm comm, const std::vector<std::string>& files);

 private:
  std::vector<FileLock> locks_;
};

}  // namespace emb
