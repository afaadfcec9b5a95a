#include "core/fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.hpp"

namespace emb {

namespace {

// Writes content to "<path>.tmp" and returns that name.
std::string write_tmp(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  EMB_CHECK(out.good(), clipped_path(path), ": cannot open for writing: ", system_reason(errno));
  out << content;
  out.flush();
  EMB_CHECK(out.good(), clipped_path(path), ": write failed (disk full?)");
  return tmp;
}

// fsync of a file or directory; throws naming the path.
void sync_to_storage(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  EMB_CHECK(fd >= 0, clipped_path(path), ": cannot open to sync it to storage: ", system_reason(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  EMB_CHECK(rc == 0, clipped_path(path), ": fsync failed: ", system_reason(err));
}

}  // namespace

void publish_durably(const std::string& tmp, const std::string& path) {
  sync_to_storage(tmp, O_RDONLY);
  EMB_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, clipped_path(path), ": cannot rename ", clipped_path(tmp),
            " into place: ", system_reason(errno));
  std::string dir = std::filesystem::path(path).parent_path().string();
  sync_to_storage(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY);
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = write_tmp(path, content);
  EMB_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, clipped_path(path), ": cannot rename ", clipped_path(tmp),
            " into place: ", system_reason(errno));
}

void write_file_durable(const std::string& path, const std::string& content) {
  publish_durably(write_tmp(path, content), path);
}

std::string make_dirs(const std::string& path) {
  // Longer than any path the system takes: said at once, not after a walk up its parents.
  EMB_CHECK(path.size() < PATH_MAX, clipped_path(path), ": cannot create directory: ", system_reason(ENAMETOOLONG));
  std::error_code ec;
  std::string top;
  for (std::filesystem::path p = path; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    top = p.string();
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(path, ec);
  EMB_CHECK(!ec, clipped_path(path), ": cannot create directory: ", ec.message());
  return top;
}

void remove_empty_dirs(const std::string& path, const std::string& top) {
  if (top.empty()) return;
  for (std::filesystem::path p = path;; p = p.parent_path())
    if (::rmdir(p.c_str()) != 0 || p == top || p == p.parent_path()) return;
}

bool path_exists(const std::string& path) { return std::filesystem::exists(path); }

std::string system_reason(int err) {
  const std::string said = std::strerror(err);
  if (err == EACCES) return said + " (check the permissions of the file and of every directory above it)";
  return said;
}

void check_readable_file(const std::string& path, const std::string& what) {
  const std::string named = what.empty() ? clipped_path(path) : str(what, " ", clipped_path(path));
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  EMB_CHECK(fd >= 0, named, ": cannot open: ", system_reason(errno));
  struct stat st {};
  const bool known = ::fstat(fd, &st) == 0;
  ::close(fd);
  EMB_CHECK(known && S_ISREG(st.st_mode), named, ": not a regular file (",
            !known ? "cannot tell its type" : S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                                                                       : "a device or socket",
            ")");
}

std::string read_file_text(const std::string& path) {
  check_readable_file(path);
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EMB_CHECK(!in.bad(), clipped_path(path), ": cannot read");
  return text;
}

}  // namespace emb
