// Checkpoints of an RL run. The policy is an ordinary embtrain checkpoint (checkpoint/checkpoint.hpp;
// step = policy version, deck = the SFT checkpoint's, so `embsim eval` evaluates it like any
// other), written by trainer 0; beside it rl_<8 digits>.h5 holds what only RL has: the value
// head (parameters and AdamW moments, with their CRC-32), the version, the optimizer's step
// counts, the version the run started from and the run's totals (update_totals.hpp). The
// sidecar is written (and renamed into place) before the policy checkpoint, so a policy
// checkpoint of an RL run always has its sidecar: one killed between the two leaves an
// orphan sidecar, never a policy checkpoint that would restart RL from version 0.
// A run starts from either (rl.init): with the sidecar it continues the version counter, the
// value head and the policy's moments; without, it starts RL from an SFT checkpoint.
// train.resume continues a run exactly (rl_sim_state.hpp: the simulators' episodes too).
// Channels are drained before a run ends (rl_shutdown.hpp), so a checkpoint never depends on
// messages in flight: its transitions are lost, as an asynchronous run's at any moment are.
#pragma once
#include <string>
#include <vector>

#include "rl/value_head.hpp"
#include "rl/roles/rl_learner.hpp"
#include "rl/roles/rl_roles.hpp"
#include "rl/roles/update_totals.hpp"

namespace emb {

// Whether the update that makes version v ends with a checkpoint (rl.ckpt_every, and the
// run's last version end_version).
bool is_checkpoint_version(const RlOptions& o, int64_t end_version, int64_t v);

// Trainer 0; returns the policy checkpoint's path.
std::string save_rl_checkpoint(const RlSetup& s, RlLearner& learner, const UpdateTotals& totals);

// What a checkpoint restores, in one line: version, AdamW step counts, CRC-32s of the policy, its
// moments and the value head state, the totals. Printed when a checkpoint is written and when a
// run resumes from it, so the two can be compared (regression/rl_hostile.sh).
std::string rl_state_digest(RlLearner& learner, const UpdateTotals& totals);

// The sidecar of a policy checkpoint ("" when it has none).
std::string rl_sidecar_path(const std::string& policy_checkpoint);

// A sidecar's version, optimizer steps, run start, totals and value head state into s, its
// checksum verified (embsim's load_rl_start reads the policy checkpoint beside it).
void read_rl_sidecar(const std::string& sidecar, RlSetup& s);

// params ‖ moment1 ‖ moment2 of a value head, as the sidecar stores them.
void restore_value_head(ValueHead& v, const std::vector<float>& state);

}  // namespace emb
