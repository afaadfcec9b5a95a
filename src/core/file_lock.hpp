// Advisory flock(2) locks between processes (of this node or, where the file system supports
// flock, of the cluster): an output two writers must not produce at once, an input a writer
// must not replace while a run reads it. The kernel releases a lock however its holder ends
// (exit, abort, SIGKILL). A file system without flock (ENOLCK, EOPNOTSUPP) gives no
// protection: the lock then counts as taken.
#pragma once
#include <string>

namespace emb {

// "pid 123 on HOST since 2026-01-01T10:00:00Z": who holds a lock, as lock files say it.
std::string lock_holder_text();
// The text of an open lock file (its holder's line), trailing blanks removed.
std::string read_lock_holder(int fd);

class FileLock {
 public:
  // An exclusive lock on `path`, created with this process's holder line when missing, and
  // removed again on release. Not taken (taken() false, holder() says who has it) when
  // another process holds it; any other failure throws emb::Error naming the path.
  static FileLock sign_exclusive(const std::string& path);
  // A lock on the existing file `path` (shared: readers; exclusive: a writer replacing it).
  // Not taken when another process holds a conflicting one; a missing or unreadable file
  // counts as taken (whoever opens it next reports why).
  static FileLock on_existing(const std::string& path, bool exclusive);

  FileLock() = default;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  bool taken() const { return taken_; }
  const std::string& holder() const { return holder_; }  // when not taken: the holder's line, if any

 private:
  void release();

  std::string path_, holder_;
  int fd_ = -1;
  bool taken_ = false, remove_on_release_ = false;
};

}  // namespace emb
