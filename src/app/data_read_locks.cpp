#include "app/data_read_locks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "comm/agreement.hpp"
#include "core/error.hpp"

namespace emb {
namespace {

// The holder line embpack wrote into <file>.lock, or "" when there is none to read.
std::string writer_of(const std::string& file) {
  const int fd = ::open((file + ".lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string holder = read_lock_holder(fd);
  ::close(fd);
  return holder;
}

}  // namespace

FileLock lock_for_reading(const std::string& file) {
  FileLock lock = FileLock::on_existing(file, false);
  if (lock.taken()) return lock;
  const std::string writer = writer_of(file);
  throw Error(str(file, ": embpack is replacing this file (", writer.empty() ? "it holds the lock" : writer,
                  "); start the run when it has finished"),
              kExitInput);
}

DataReadLocks::DataReadLocks(MPI_Comm comm, const std::vector<std::string>& files) {
  run_agreed(comm, [&] {
    for (const std::string& file : files) locks_.push_back(lock_for_reading(file));
  });
}

}  // namespace emb
