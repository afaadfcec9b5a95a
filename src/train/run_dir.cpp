#include "train/run_dir.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"

namespace emb {
namespace {

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::string broadcast_string(MPI_Comm comm, std::string text) {
  int n = int(text.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, comm);
  text.resize(size_t(n));
  MPI_Bcast(text.data(), n, MPI_CHAR, 0, comm);
  return text;
}

}  // namespace

std::string create_fresh_dir(const std::string& base) {
  std::string parent = std::filesystem::path(base).parent_path().string();
  if (!parent.empty()) make_dirs(parent);
  for (int attempt = 1;; ++attempt) {
    std::string path = attempt == 1 ? base : str(base, "-", attempt);
    // mkdir is atomic: EEXIST means another run owns that name.
    if (mkdir(path.c_str(), 0755) == 0) return path;
    EMB_CHECK(errno == EEXIST, path, ": cannot create run directory: ", std::strerror(errno));
  }
}

std::string create_run_dir(MPI_Comm comm, const Deck& deck) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string path, error;
  if (rank == 0) {
    try {
      std::string name = deck.get_string("run.name");
      if (name.empty()) name = str(deck.stem(), "-", timestamp());
      path = create_fresh_dir(deck.get_string("run.output_dir") + "/" + name);
      write_file_atomic(path + "/deck.resolved", deck.resolved_text());
    } catch (const Error& e) {
      error = e.what();
    }
  }
  error = broadcast_string(comm, error);
  if (!error.empty()) throw Error(error);
  return broadcast_string(comm, path);
}

}  // namespace emb
