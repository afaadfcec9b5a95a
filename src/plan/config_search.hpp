// The configurations --plan ranks: every shard mode, recompute mode, micro-batch size (powers
// of two up to the samples a rank gets, and the deck's; a packed deck's none below its longest
// sample) and bucket size (the deck's, 25, 100 and 400 MiB) of a workload, ranked by the
// planner's step time, those that fit in memory first (DESIGN.md "Parallelism").
#pragma once
#include <vector>

#include "plan/step_model.hpp"

namespace emb {

std::vector<StepPrediction> rank_configurations(const Hardware& hw, const Workload& deck);

}  // namespace emb
