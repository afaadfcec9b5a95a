#include "app/run_dir.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <filesystem>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
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

}  // namespace

std::string create_fresh_dir(const std::string& base) {
  std::string parent = std::filesystem::path(base).parent_path().string();
  if (!parent.empty()) make_dirs(parent);
  for (int attempt = 1;; ++attempt) {
    std::string path = attempt == 1 ? base : str(base, "-", attempt);
    // mkdir is atomic: EEXIST means another run owns that name.
    if (mkdir(path.c_str(), 0755) == 0) return path;
    EMB_CHECK(errno == EEXIST, clipped_path(path), ": cannot create run directory: ", system_reason(errno));
  }
}

std::string create_run_dir(MPI_Comm comm, const RunConfig& cfg) {
  const int rank = rank_in(comm);
  std::string path;
  run_agreed(comm, [&] {
    if (rank != 0) return;
    const std::string name = cfg.run.name.empty() ? str(cfg.deck_stem, "-", timestamp()) : cfg.run.name;
    path = create_fresh_dir(cfg.run.output_dir + "/" + name);
    write_file_atomic(path + "/deck.resolved", cfg.deck_text);
    write_file_atomic(path + "/ckpt_dir", cfg.train.ckpt_dir + "\n");  // where `embtrain export RUN` looks
  });
  broadcast_string(comm, path);
  return path;
}

}  // namespace emb
