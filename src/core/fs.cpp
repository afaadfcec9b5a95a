#include "core/fs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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
  EMB_CHECK(out.good(), path, ": cannot open for writing");
  out << content;
  out.flush();
  EMB_CHECK(out.good(), path, ": write failed (disk full?)");
  return tmp;
}

// fsync of a file or directory; throws naming the path.
void sync_to_storage(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  EMB_CHECK(fd >= 0, path, ": cannot open to sync it to storage: ", std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  EMB_CHECK(rc == 0, path, ": fsync failed: ", std::strerror(err));
}

}  // namespace

void publish_durably(const std::string& tmp, const std::string& path) {
  sync_to_storage(tmp, O_RDONLY);
  EMB_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, path, ": cannot rename ", tmp, " into place: ",
            std::strerror(errno));
  std::string dir = std::filesystem::path(path).parent_path().string();
  sync_to_storage(dir.empty() ? "." : dir, O_RDONLY | O_DIRECTORY);
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = write_tmp(path, content);
  EMB_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, path, ": cannot rename ", tmp, " into place");
}

void write_file_durable(const std::string& path, const std::string& content) {
  publish_durably(write_tmp(path, content), path);
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  EMB_CHECK(!ec, path, ": cannot create directory: ", ec.message());
}

bool path_exists(const std::string& path) { return std::filesystem::exists(path); }

std::string read_file_text(const std::string& path) {
  EMB_CHECK(std::filesystem::is_regular_file(path), path, ": no such file");
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EMB_CHECK(!in.bad(), path, ": cannot read");
  return text;
}

}  // namespace emb
