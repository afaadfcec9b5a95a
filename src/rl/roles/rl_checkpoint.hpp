// Checkpoints of an RL run. The policy is an ordinary embtrain checkpoint (checkpoint/checkpoint.hpp;
// step = policy version, deck = the SFT checkpoint's, so `embsim eval` evaluates it like any
// other), written by trainer 0; beside it rl_<8 digits>.h5 holds what only RL has: the value
// head (parameters and AdamW moments), the version and the optimizer's step count. A run
// resumes from either file (rl.init): with the sidecar it continues the version counter, the
// value head and the policy's moments; without, it starts RL from an SFT checkpoint.
// Channels are drained before a run ends (rl_shutdown.hpp), so a checkpoint never depends on
// messages in flight: its transitions are lost, as an asynchronous run's at any moment are.
#pragma once
#include <string>
#include <vector>

#include "rl/value_head.hpp"
#include "rl/roles/rl_learner.hpp"
#include "rl/roles/rl_roles.hpp"

namespace emb {

// Trainer 0; returns the policy checkpoint's path.
std::string save_rl_checkpoint(const RlSetup& s, RlLearner& learner);

// The sidecar of a policy checkpoint ("" when it has none).
std::string rl_sidecar_path(const std::string& policy_checkpoint);

// A sidecar's version, optimizer steps and value head state into s (embsim's load_rl_start
// reads the policy checkpoint beside it).
void read_rl_sidecar(const std::string& sidecar, RlSetup& s);

// params ‖ moment1 ‖ moment2 of a value head, as the sidecar stores them.
void restore_value_head(ValueHead& v, const std::vector<float>& state);

}  // namespace emb
