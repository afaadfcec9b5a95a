// The one-shot commands of the executable besides training: `--dump` (the forward/backward of
// the first step for parity checks, MODEL.md "Dump") and `--plan` (size and cost of a preset at
// a rank count, without allocating the model).
#pragma once
#include <string>

#include "comm/world.hpp"
#include "config/run_config.hpp"

namespace emb {

// Runs step 1 of the deck's data on every rank of `world` (its micro-batches, on run.device, in
// fp32) and writes the step's dump to `path` (collective).
void write_step_dump(const World& world, const RunConfig& cfg, const std::string& path);

// The --plan report for `train.ranks` (or `world_size` when 0).
std::string plan_report(const RunConfig& cfg, int world_size);

}  // namespace emb
