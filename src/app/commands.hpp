// The one-shot commands of the executable besides training: `export`, `--dump` (the forward/backward of
// the first step for parity checks, MODEL.md "Dump") and `--plan` (size and cost of a preset at
// a rank count, without allocating the model).
#pragma once
#include <string>

#include "comm/world.hpp"
#include "config/run_config.hpp"
#include "train/init_from.hpp"

namespace emb {

// Runs step 1 of the deck's data on every rank of `world` (its micro-batches, on run.device, in
// fp32) and writes the step's dump to `path` (collective). The parameters are init_from's
// released weights when given (the imported model), else drawn from run.seed.
void write_step_dump(const World& world, const RunConfig& cfg, const std::string& path,
                     const InitFrom* init_from = nullptr);

// `embtrain export SOURCE -o OUT [--force]` (export_command.cpp): the run's or checkpoint's
// parameters as the released checkpoint it fine-tuned (train.init_from), written whole or not
// at all. Throws emb::Error (exit code 2) naming the file at fault.
void export_weights(const std::string& source, const std::string& out, bool force);

// The --plan report for `train.ranks` (or `world_size` when 0).
std::string plan_report(const RunConfig& cfg, int world_size);

}  // namespace emb
