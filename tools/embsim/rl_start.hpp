// Where an RL run starts: the policy checkpoint rl.init names (an SFT run's or an RL run's, with
// its sidecar; rl/roles/rl_checkpoint.hpp), read through Gr00tPolicy so it is validated as
// `embsim eval` validates it; or, with train.resume, the checkpoint of this run it continues
// exactly (rl_checkpoint.hpp, rl_sim_state.hpp).
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "observation.hpp"
#include "rl/roles/rl_roles.hpp"

namespace emb {

// The last checkpoint of `checkpoint` (file, checkpoint dir or run dir): fills s.cfg,
// s.sft_deck_text, s.init_params, the flow/exec steps and, from a sidecar, the version,
// optimizer steps, run start, totals, value head state and the policy's AdamW moments, and
// s.vl_observer (the encoder the checkpoint's features came from; rl_observer.hpp). Throws when
// the policy cannot act in s.task with observation's vl rows.
void load_rl_start(const std::string& checkpoint, const std::vector<std::string>& deck_sets,
                   const ObservationOptions& observation, RlSetup& s);

// Collective over comm (every rank of the run). train.resume = auto: the checkpoint of this run
// (s.o.run_id) in s.o.ckpt_dir that checkpoint_dir's resolve_resume picks (the newest complete
// one, whatever `latest` names; other runs' checkpoints are skipped, a directory holding only
// theirs is refused) and that can continue (a policy checkpoint with its sidecar and, in round modes,
// every simulator's state); when any rank fails to load it, every rank falls back to the next
// older one (a warning); rl.init when the directory holds none. train.resume = PATH: that
// checkpoint (a directory: its complete ones that can continue, newest first). off: rl.init,
// a new run from its version.
void load_rl_run_start(MPI_Comm comm, const std::vector<std::string>& deck_sets, const ObservationOptions& observation,
                       RlSetup& s);

}  // namespace emb
