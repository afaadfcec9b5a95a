#include "core/fs.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace emb {

void write_file_atomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    EMB_CHECK(out.good(), path, ": cannot open for writing");
    out << content;
    out.flush();
    EMB_CHECK(out.good(), path, ": write failed (disk full?)");
  }
  EMB_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, path, ": cannot rename ", tmp, " into place");
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  EMB_CHECK(!ec, path, ": cannot create directory: ", ec.message());
}

bool path_exists(const std::string& path) { return std::filesystem::exists(path); }

}  // namespace emb
