#include "rl_start.hpp"

#include <filesystem>

#include "checkpoint/checkpoint_dir.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "gr00t_policy.hpp"
#include "rl/roles/rl_checkpoint.hpp"
#include "rl/roles/rl_sim_state.hpp"

namespace emb {

namespace {

// Whether `policy` (step_<version>.h5) has all a continued run needs beside it.
bool continuable(const std::string& policy, const RlOptions& o) {
  const std::string side = rl_sidecar_path(policy);
  if (side.empty()) return false;
  if (o.mode == RlMode::async) return true;
  const std::string name = std::filesystem::path(policy).filename().string();
  const int64_t version = std::stoll(name.substr(5, 8));
  const std::string dir = std::filesystem::path(policy).parent_path().string();
  for (int i = 0; i < o.simulators; ++i)
    if (!std::filesystem::is_regular_file(sim_state_path(dir, version, i))) return false;
  return true;
}

// Newest first.
std::vector<std::string> resume_candidates(const RlOptions& o) {
  namespace fs = std::filesystem;
  const bool named = o.resume != "auto";
  if (!named && (!fs::is_directory(o.ckpt_dir) || list_checkpoints(o.ckpt_dir).empty())) return {};
  std::vector<std::string> found = find_checkpoints(named ? o.resume : o.ckpt_dir), usable;
  if (named) found = {found.back()};
  for (auto it = found.rbegin(); it != found.rend(); ++it)
    if (continuable(*it, o)) usable.push_back(*it);
  EMB_CHECK(!usable.empty(), named ? o.resume : o.ckpt_dir, ": train.resume = ", o.resume,
            ": no checkpoint of an RL run that can continue (a policy checkpoint with its rl_ sidecar",
            o.mode == RlMode::async ? "" : " and every simulator's state", ")");
  return usable;
}

}  // namespace

void load_rl_start(const std::string& checkpoint, const std::vector<std::string>& deck_sets, int d_vl, RlSetup& s) {
  const std::vector<std::string> found = find_checkpoints(checkpoint);
  const std::string path = found.back();
  Gr00tPolicy policy(path, deck_sets, s.o.seed, s.local_rank);  // validates the checkpoint and reads its model
  s.cfg = policy.config();
  s.flow_steps = policy.flow_steps(), s.exec_steps = policy.exec_steps();
  policy.check_task(s.task, d_vl);
  s.init_params = policy.params();
  s.sft_deck_text = policy.deck_text();
  const std::string side = rl_sidecar_path(path);
  if (side.empty()) return;
  read_rl_sidecar(side, s);
  s.exp_avg = policy.exp_avg(), s.exp_avg_sq = policy.exp_avg_sq();
}

void load_rl_run_start(const std::vector<std::string>& deck_sets, int d_vl, RlSetup& s) {
  const std::vector<std::string> candidates = s.o.resume == "off" ? std::vector<std::string>() : resume_candidates(s.o);
  if (candidates.empty()) {
    load_rl_start(s.o.init, deck_sets, d_vl, s);
    s.run_start_version = s.start_version, s.start_totals = UpdateTotals{};  // a new run from it
    return;
  }
  for (size_t i = 0;; ++i) {
    try {
      load_rl_start(candidates[i], deck_sets, d_vl, s);
      s.resume_dir = std::filesystem::path(candidates[i]).parent_path().string();
      return;
    } catch (const Error& e) {
      if (i + 1 == candidates.size()) throw;
      warn_line(str("train.resume: ", e.what(), "; trying the older ", candidates[i + 1]));
    }
  }
}

}  // namespace emb
