#include "rl_start.hpp"

#include "gr00t_policy.hpp"
#include "rl/roles/rl_checkpoint.hpp"

namespace emb {

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

}  // namespace emb
