#include "checkpoint/checkpoint_dir.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <utility>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/log.hpp"
#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "checkpoint/checkpoint_file.hpp"

namespace emb {
namespace fs = std::filesystem;

namespace {

std::string first_word(const std::string& file) {
  std::ifstream in(file);
  std::string word;
  in >> word;
  return word;
}

std::string read_latest(const std::string& dir) { return first_word(dir + "/" + kLatestName); }

// The checkpoint folder `path` names: a run's output folder's (its `ckpt_dir` file, written by
// create_run_dir), otherwise path itself.
std::string checkpoint_folder_of(const std::string& path) {
  const fs::path named = fs::path(path) / "ckpt_dir";
  return fs::is_regular_file(named) ? first_word(named.string()) : path;
}

struct Found {
  std::string path, run_id;
};

// The complete checkpoints of dir, newest first, with their run identities; each file that
// is not complete is reported and skipped.
std::vector<Found> complete_checkpoints(const std::string& dir) {
  std::vector<Found> found;
  std::vector<std::string> names = list_checkpoints(dir);
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    std::string path = dir + "/" + *it;
    std::string problem = checkpoint_problem(path);
    if (problem.empty())
      found.push_back({path, checkpoint_run_id(path)});
    else
      log_warn("skipping ", problem);
  }
  return found;
}

// `latest` is only a hint: a run stopped between publishing a checkpoint and pointing
// `latest` at it leaves `latest` one behind, so a newer complete checkpoint wins; said once.
void note_lagging_latest(const std::string& dir, const std::string& newest) {
  const std::string latest = dir + "/" + kLatestName;
  if (!fs::exists(latest)) return;
  const std::string named = dir + "/" + read_latest(dir);
  if (named != newest && fs::exists(named))
    log_info(latest, " names ", named, ", but ", newest, " is newer and complete (the run stopped before updating ",
             kLatestName, "); resuming from the newer one");
}

std::vector<std::string> resolve_auto(const std::string& dir, const std::string& run_id) {
  const std::vector<std::string> names = list_checkpoints(dir);
  const std::vector<Found> all = complete_checkpoints(dir);
  if (all.empty() && !names.empty())
    throw Error(str("train.resume = auto: none of the ", names.size(), " checkpoints in ", dir,
                    " is complete (newest ", names.back(),
                    "); to start fresh set train.resume = off or give this run its own train.ckpt_dir"),
                kExitInput);
  std::vector<std::string> ours;
  for (const Found& f : all)
    if (f.run_id == run_id) ours.push_back(f.path);
  if (ours.empty() && !all.empty())
    throw Error(str("train.resume = auto: ", dir, " holds checkpoints of other runs only (newest ", all[0].path,
                    ", run id '", all[0].run_id, "'; this deck is run '", run_id,
                    "': another seed, model, data or optimizer setting); to continue it set train.resume = ",
                    all[0].path, ", to start fresh give this run its own train.ckpt_dir or run.name"),
                kExitInput);
  if (ours.empty()) {
    log_info("resume = auto: no checkpoint in '", dir, "', starting fresh");
    return ours;
  }
  note_lagging_latest(dir, ours[0]);
  log_info("resume = auto: resuming from ", ours[0]);
  return ours;
}

}  // namespace

std::string checkpoint_step_digits(int64_t step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%08lld", static_cast<long long>(step));
  return digits;
}

std::string checkpoint_file_name(int64_t step) { return "step_" + checkpoint_step_digits(step) + ".h5"; }

std::string checkpoint_problem(const std::string& path) {
  try {
    CheckpointFile(path, MPI_COMM_NULL, CheckpointFile::Access::read).expect_complete();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string checkpoint_corruption(const std::string& path, CheckedTensors checked) {
  try {
    CheckpointFile f(path, MPI_COMM_NULL, CheckpointFile::Access::read);
    std::vector<float> data;
    const size_t groups = checked == CheckedTensors::parameters ? 1 : kTensorGroups.size();  // params first
    for (size_t k = 0; k < groups; ++k) {
      const char* group = kTensorGroups[k];
      const std::string g = str("/", group);
      if (!f.has(g)) continue;
      for (const std::string& name : f.members(g)) {
        const std::string ds = g + "/" + name;
        int64_t n = 1;
        for (int64_t d : f.tensor_shape(ds)) n *= d;
        data.resize(size_t(n));
        f.read_verified_tensor(ds, n, data.data());
      }
    }
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

std::string checkpoint_run_id(const std::string& path) {
  try {
    CheckpointFile f(path, MPI_COMM_NULL, CheckpointFile::Access::read);
    return f.has_attr("run_id") ? f.attr_string("run_id") : "";
  } catch (const Error&) {
    return "";
  }
}

void prune_checkpoints(const std::string& dir, int keep, const std::string& run_id) {
  std::vector<std::string> ours;
  for (const std::string& name : list_checkpoints(dir))
    if (checkpoint_run_id(dir + "/" + name) == run_id) ours.push_back(name);
  for (size_t i = 0; i + size_t(keep) < ours.size(); ++i) {
    std::error_code ec;
    fs::remove(dir + "/" + ours[i], ec);
    if (ec) log_warn(dir, "/", ours[i], ": cannot delete old checkpoint: ", ec.message());
  }
}

std::vector<std::string> verified_checkpoints(const std::string& path, CheckedTensors checked, size_t wanted) {
  if (!fs::exists(path))
    throw Error(str(path, ": no such checkpoint file, checkpoint folder or run output folder"), kExitInput);
  if (!fs::is_directory(path)) return {path};
  const std::string dir = checkpoint_folder_of(path);
  std::vector<std::string> verified;
  for (const Found& f : complete_checkpoints(dir)) {
    if (verified.size() == wanted) break;
    const std::string problem = checkpoint_corruption(f.path, checked);
    if (problem.empty())
      verified.push_back(f.path);
    else
      log_warn("skipping ", problem);
  }
  if (verified.empty())
    throw Error(str(path, ": no complete checkpoint with intact tensors in ", dir, " (", list_checkpoints(dir).size(),
                    " step_*.h5 files; train.ckpt_every > 0 writes them)"),
                kExitInput);
  return verified;
}

std::vector<std::string> resolve_resume(MPI_Comm comm, const std::string& setting, const std::string& dir,
                                        const std::string& run_id) {
  const int rank = rank_in(comm);
  std::vector<std::string> paths;
  std::string error;
  int code = kExitFailure;
  if (rank == 0) {
    try {
      if (setting == "auto") {
        paths = resolve_auto(dir, run_id);
      } else if (setting != "off" && !setting.empty()) {
        check_readable_file(setting, "train.resume: checkpoint");
        paths = {setting};
      }
    } catch (const Error& e) {
      error = e.what(), code = e.exit_code();
    }
  }
  throw_if_any_rank_failed(comm, error, code);
  std::string joined;
  for (const std::string& p : paths) joined += p + "\n";
  broadcast_string(comm, joined);
  paths.clear();
  for (size_t at = 0, end; (end = joined.find('\n', at)) != std::string::npos; at = end + 1)
    paths.push_back(joined.substr(at, end - at));
  return paths;
}

}  // namespace emb
