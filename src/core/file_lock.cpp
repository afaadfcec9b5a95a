#include "core/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

#include "core/error.hpp"
#include "core/host_name.hpp"

namespace emb {
namespace {

// flock's answer: 0 taken, EWOULDBLOCK held by another, or an error (no flock support
// counts as taken).
int try_flock(int fd, int operation) {
  if (::flock(fd, operation | LOCK_NB) == 0) return 0;
  const int err = errno;
  return err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS ? 0 : err;
}

// Whether the open fd is still the file at `path` (a releasing holder may have removed it
// between our open and our lock).
bool still_at(int fd, const std::string& path) {
  struct stat open_file {}, named {};
  return ::fstat(fd, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 && open_file.st_ino == named.st_ino &&
         open_file.st_dev == named.st_dev;
}

}  // namespace

std::string lock_holder_text() {
  const std::string host = host_name();
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return str("pid ", ::getpid(), " on ", host, " since ", when);
}

std::string read_lock_holder(int fd) {
  std::string text;
  char buf[256];
  ssize_t n;
  ::lseek(fd, 0, SEEK_SET);
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, size_t(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

FileLock FileLock::sign_exclusive(const std::string& path) {
  FileLock lock;
  lock.path_ = path;
  while (true) {
    lock.fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EMB_CHECK(lock.fd_ >= 0, path, ": cannot create the lock file: ", std::strerror(errno));
    const int err = try_flock(lock.fd_, LOCK_EX);
    if (err == EWOULDBLOCK) {
      lock.holder_ = read_lock_holder(lock.fd_);
      lock.release();
      return lock;
    }
    EMB_CHECK(err == 0, path, ": cannot lock: ", std::strerror(err));
    if (still_at(lock.fd_, path)) break;
    lock.release();  // its holder removed it meanwhile: lock the new one
  }
  const std::string mine = lock_holder_text() + "\n";
  EMB_CHECK(::ftruncate(lock.fd_, 0) == 0 && ::pwrite(lock.fd_, mine.data(), mine.size(), 0) == ssize_t(mine.size()),
            path, ": cannot write the lock holder: ", std::strerror(errno));
  lock.taken_ = lock.remove_on_release_ = true;
  return lock;
}

FileLock FileLock::on_existing(const std::string& path, bool exclusive) {
  FileLock lock;
  lock.path_ = path;
  lock.taken_ = true;
  lock.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (lock.fd_ < 0) return lock;
  const int err = try_flock(lock.fd_, exclusive ? LOCK_EX : LOCK_SH);
  if (err == EWOULDBLOCK) {
    lock.release();
    return lock;  // taken_ false (release clears it)
  }
  EMB_CHECK(err == 0, path, ": cannot lock: ", std::strerror(err));
  return lock;
}

FileLock::FileLock(FileLock&& other) noexcept { *this = std::move(other); }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_), holder_ = std::move(other.holder_);
    fd_ = std::exchange(other.fd_, -1);
    taken_ = std::exchange(other.taken_, false);
    remove_on_release_ = std::exchange(other.remove_on_release_, false);
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (fd_ >= 0) {
    if (remove_on_release_) ::unlink(path_.c_str());  // while still locked: a waiter re-checks the name
    ::close(fd_);  // releases the flock
  }
  fd_ = -1;
  taken_ = remove_on_release_ = false;
}

}  // namespace emb
