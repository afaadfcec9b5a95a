#include "checkpoint/checkpoint_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "core/file_lock.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"

namespace emb {

CheckpointLock::CheckpointLock(MPI_Comm comm, const std::string& dir, const std::string& run_id)
    : dir_(dir), path_(dir + "/.lock"), unwinding_at_start_(std::uncaught_exceptions()) {
  const int rank = rank_in(comm);
  run_agreed(comm, [&] {
    if (rank != 0) return;
    top_created_ = make_dirs(dir);
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EMB_CHECK(fd_ >= 0, clipped_path(path_), ": cannot create the checkpoint directory's lock: ", system_reason(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string holder = read_lock_holder(fd_);
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK)
        throw Error(str(clipped_path(dir), ": checkpoint directory in use by another run (", holder.empty() ? "lock held" : holder,
                        "); give this run its own train.ckpt_dir or run.name"),
                    kExitInput);
      throw Error(str(clipped_path(path_), ": cannot lock the checkpoint directory: ", system_reason(err)));
    }
    const std::string previous = read_lock_holder(fd_);
    if (!previous.empty())
      log_warn(dir, ": taking over the lock of a run that ended without releasing it (", previous, ")");
    const std::string mine = str(lock_holder_text(), ", run ", run_id, "\n");
    EMB_CHECK(::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, mine.data(), mine.size(), 0) == ssize_t(mine.size()),
              clipped_path(path_), ": cannot write the lock holder: ", system_reason(errno));
  });
  broadcast_string(comm, top_created_);
}

void CheckpointLock::discard() const {
  ::unlink(path_.c_str());
  remove_empty_dirs(dir_, top_created_);
}

CheckpointLock::~CheckpointLock() {
  if (std::uncaught_exceptions() > unwinding_at_start_) discard();
  if (fd_ < 0) return;
  if (::ftruncate(fd_, 0) != 0) log_warn(path_, ": cannot empty the lock file: ", std::strerror(errno));
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace emb
