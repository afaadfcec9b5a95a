#include "train/checkpoint_dir.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "comm/agreement.hpp"
#include "train/checkpoint_file.hpp"

namespace emb {
namespace fs = std::filesystem;

namespace {

std::string read_latest(const std::string& dir) {
  std::ifstream in(dir + "/" + kLatestName);
  std::string name;
  in >> name;
  return name;
}

std::string newest_complete(const std::string& dir) {
  std::vector<std::string> names = list_checkpoints(dir);
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    std::string path = dir + "/" + *it;
    std::string problem = checkpoint_problem(path);
    if (problem.empty()) return path;
    log_warn("skipping ", problem);
  }
  return "";
}

std::string resolve_auto(const std::string& dir) {
  const std::string latest = dir + "/" + kLatestName;
  if (fs::exists(latest)) {
    const std::string name = read_latest(dir);
    const std::string path = dir + "/" + name;
    std::string problem = name.empty() ? str(latest, ": empty") : checkpoint_problem(path);
    if (problem.empty()) return path;
    log_warn(latest, " names an unusable checkpoint (", problem, "); falling back to the newest complete one");
  }
  std::string path = newest_complete(dir);
  if (path.empty())
    log_info("resume = auto: no complete checkpoint in '", dir, "', starting fresh");
  else
    log_info("resume = auto: resuming from ", path);
  return path;
}

}  // namespace

std::string checkpoint_file_name(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step_%08lld.h5", static_cast<long long>(step));
  return name;
}

std::string checkpoint_problem(const std::string& path) {
  try {
    CheckpointFile(path, MPI_COMM_NULL, CheckpointFile::Access::read).expect_complete();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  static const std::regex pattern(R"(step_(\d+)\.h5)");
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    std::smatch m;
    if (std::regex_match(name, m, pattern)) found.emplace_back(std::stoll(m[1].str()), name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& f : found) names.push_back(std::move(f.second));
  return names;
}

void prune_checkpoints(const std::string& dir, int keep) {
  std::vector<std::string> names = list_checkpoints(dir);
  for (size_t i = 0; i + size_t(keep) < names.size(); ++i) {
    std::error_code ec;
    fs::remove(dir + "/" + names[i], ec);
    if (ec) log_warn(dir, "/", names[i], ": cannot delete old checkpoint: ", ec.message());
  }
}

std::string resolve_resume(MPI_Comm comm, const std::string& setting, const std::string& dir) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string path, error;
  if (rank == 0) {
    try {
      if (setting == "auto") {
        path = resolve_auto(dir);
      } else if (setting != "off" && !setting.empty()) {
        EMB_CHECK(fs::is_regular_file(setting), setting, ": no such checkpoint (train.resume)");
        path = setting;
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  throw_if_any_rank_failed(comm, error);
  broadcast_string(comm, path);
  return path;
}

}  // namespace emb
