// The one-shot commands of the executable besides training: `--dump` (one forward/backward
// of the first micro-batch for parity checks, MODEL.md "Dump") and `--plan` (size and cost of
// a preset at a rank count, without allocating the model).
#pragma once
#include <string>

#include "config/run_config.hpp"
#include "train/init_from.hpp"

namespace emb {

// Runs step 1 of the deck's first micro-batch on one rank in fp32 and writes `path`; the
// parameters are init_from's released weights when given (the imported model), else drawn
// from run.seed.
void write_step_dump(const RunConfig& cfg, const std::string& path, const InitFrom* init_from = nullptr);

// The --plan report for `train.ranks` (or `world_size` when 0).
std::string plan_report(const RunConfig& cfg, int world_size);

}  // namespace emb
