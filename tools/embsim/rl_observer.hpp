// The vl tokens of RL's simulators (rl/roles/vl_observer.hpp): the task's cameras rendered and
// encoded by ObservationEncoder, exactly as collection and evaluation see them.
#pragma once
#include "observation.hpp"
#include "rl/roles/vl_observer.hpp"

namespace emb {

VlObserverFactory rl_vl_observer(const ObservationOptions& o);

}  // namespace emb
