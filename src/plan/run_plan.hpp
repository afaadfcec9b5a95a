// The --plan answer for a resolved deck: the workload the deck states (the data's mean and
// longest context read from data.paths when its files are there), its step on plan.hardware,
// the ranked configurations and the memory plan of the micro-batch the prediction costs.
// The application prints it (app/plan_command.cpp).
#pragma once
#include <vector>

#include "config/run_config.hpp"
#include "plan/hardware.hpp"
#include "plan/model_cost.hpp"
#include "plan/step_model.hpp"

namespace emb {

// The training configuration of `cfg` at plan.ranks (or `world_size` when 0).
Workload workload_of_run(const RunConfig& cfg, int world_size);

struct RunPlan {
  Hardware hw;                          // plan.hardware
  StepPrediction as_deck;               // the deck's configuration
  std::vector<StepPrediction> ranked;   // every configuration, best first (config_search.hpp)
  PlanReport memory;                    // sizes and memory of as_deck's micro-batch
};

RunPlan plan_run(const RunConfig& cfg, int world_size);

}  // namespace emb
