// Helpers of the weights tests: a scratch folder per test process (several checkouts run the
// suites at once on one machine), file contents, and the process's resident memory.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace emb::test {

// /tmp/embtrain_test_<suite>_<pid>, created empty and removed when the process exits.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& suite)
      : path_("/tmp/embtrain_test_" + suite + "_" + std::to_string(::getpid())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_bytes(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), std::streamsize(size));
}

// Pages of this process in memory, file-backed mappings included.
inline int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

}  // namespace emb::test
