// Where an RL run starts: the policy checkpoint rl.init names (an SFT run's or an RL run's, with
// its sidecar; rl/roles/rl_checkpoint.hpp), read through Gr00tPolicy so it is validated as
// `embsim eval` validates it.
#pragma once
#include <string>
#include <vector>

#include "rl/roles/rl_roles.hpp"

namespace emb {

// The last checkpoint of `checkpoint` (file, checkpoint dir or run dir): fills s.cfg,
// s.sft_deck_text, s.init_params, the flow/exec steps and, from a sidecar, the version,
// optimizer steps, value head state and the policy's AdamW moments. Throws when the policy
// cannot act in s.task with vl width d_vl.
void load_rl_start(const std::string& checkpoint, const std::vector<std::string>& deck_sets, int d_vl, RlSetup& s);

}  // namespace emb
