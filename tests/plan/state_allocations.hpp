// What one rank of a run allocates for its training state: the bytes its DataParallel and its
// Optimizer take from the backend (counted by counting_ops.hpp) for the rank's ShardLayout. Its
// own file: the comm headers and the planner's (plan/collective_model.hpp) both name a Collective.
#pragma once
#include <cstdint>

#include "model/param_registry.hpp"
#include "plan/state_memory.hpp"

namespace emb::test {

int64_t allocated_state_bytes(const ParamRegistry& reg, ShardMode mode, int rank, int ranks,
                              const PlanSharding& sharding, bool bf16);

}  // namespace emb::test
