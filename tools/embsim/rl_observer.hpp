// The vl tokens of RL's simulators (rl/roles/vl_observer.hpp): the task's cameras rendered and
// encoded by ObservationEncoder with the encoder the policy's features came from
// (checkpoint_vl.hpp), exactly as collection and evaluation see them. The Eagle backbone runs on
// each simulator's CPU (fp32), one per simulator process.
#pragma once
#include "checkpoint_vl.hpp"
#include "observation.hpp"
#include "rl/roles/vl_observer.hpp"

namespace emb {

// Throws emb::Error for a train.tune_visual source: RL trains the action head only, and the
// rollouts' vision tower would drift from the one RL's trainer keeps.
VlObserverFactory rl_vl_observer(const ObservationOptions& o, const CheckpointVl& source, const ModelConfig& mc);

}  // namespace emb
