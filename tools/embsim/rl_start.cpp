#include "rl_start.hpp"

#include <filesystem>

#include "checkpoint/checkpoint_dir.hpp"
#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "gr00t_policy.hpp"
#include "rl_observer.hpp"
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

// The checkpoints a run may continue from, best first (all ranks alike): resume = auto:
// resolve_resume's (this run's complete ones, newest first whatever `latest` names; rank 0
// decides) that can continue; a path: verified_checkpoints of that file, checkpoint or run
// directory (the same rule, their tensors' checksums verified).
std::vector<std::string> resume_candidates(MPI_Comm comm, const RlOptions& o) {
  const bool named = o.resume != "auto";
  std::vector<std::string> found =
      named ? verified_checkpoints(o.resume, CheckedTensors::parameters_and_moments) : resolve_resume(comm, o.resume, o.ckpt_dir, o.run_id);
  std::vector<std::string> usable;
  for (const std::string& path : found)
    if (continuable(path, o)) usable.push_back(path);
  EMB_CHECK(found.empty() || !usable.empty(), named ? o.resume : o.ckpt_dir, ": train.resume = ", o.resume,
            ": no checkpoint of this RL run that can continue (a policy checkpoint with its rl_ sidecar",
            o.mode == RlMode::async ? "" : " and every simulator's state", ")");
  return usable;
}

}  // namespace

void load_rl_start(const std::string& checkpoint, const std::vector<std::string>& deck_sets,
                   const ObservationOptions& observation, RlSetup& s) {
  const std::string path = verified_checkpoints(checkpoint, CheckedTensors::parameters, 1).front();
  Gr00tPolicy policy(path, deck_sets, s.o.seed, s.local_rank);  // validates the checkpoint and reads its model
  s.cfg = policy.config();
  s.flow_steps = policy.flow_steps(), s.exec_steps = policy.exec_steps();
  policy.check_task(s.task, observation.d_vl);
  s.vl_observer = rl_vl_observer(observation, policy.vl_source(), policy.config());
  s.init_params = policy.params();
  s.sft_deck_text = policy.deck_text();
  s.sft_vl_features = policy.vl_features();
  s.normalization = policy.normalization();
  const std::string side = rl_sidecar_path(path);
  if (side.empty()) return;
  read_rl_sidecar(side, s);
  s.exp_avg = policy.exp_avg(), s.exp_avg_sq = policy.exp_avg_sq();
}

void load_rl_run_start(MPI_Comm comm, const std::vector<std::string>& deck_sets, const ObservationOptions& observation,
                       RlSetup& s) {
  const std::vector<std::string> candidates =
      s.o.resume == "off" ? std::vector<std::string>() : resume_candidates(comm, s.o);
  if (candidates.empty()) {
    load_rl_start(s.o.init, deck_sets, observation, s);
    s.run_start_version = s.start_version, s.start_totals = UpdateTotals{};  // a new run from it
    return;
  }
  // Every rank loads; all of them move to the older checkpoint when any of them fails, so
  // every rank starts from the same version.
  for (size_t i = 0;; ++i) {
    try {
      run_agreed(comm, [&] { load_rl_start(candidates[i], deck_sets, observation, s); });
      s.resume_dir = std::filesystem::path(candidates[i]).parent_path().string();
      return;
    } catch (const AgreedError& e) {
      if (i + 1 == candidates.size()) throw;
      if (rank_in(comm) == 0)
        warn_line(str("train.resume: ", e.what(), "; every rank tries the older ", candidates[i + 1]));
    }
  }
}

}  // namespace emb
