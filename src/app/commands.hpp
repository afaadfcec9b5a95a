// The one-shot commands of the executable besides training: `export`, `--dump` (the forward/backward of
// the first step for parity checks, MODEL.md "Dump") and `--plan` (size and cost of a preset at
// a rank count, without allocating the model).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "batch/packed_batch.hpp"
#include "comm/world.hpp"
#include "kernels/ops.hpp"
#include "model/model.hpp"
#include "config/run_config.hpp"
#include "train/init_from.hpp"

namespace emb {

// The step a dump records: run.seed and the step number (the draws' and dropout masks' key).
struct StepKey {
  uint64_t seed = 0;
  int64_t step = 0;
};

class DumpBackbone;  // app/dump_backbone.hpp

// Runs `micro_batches` (this rank's share of one step) through `model` on `ops` from the flat
// fp32 parameters `params` and writes the step's dump to `path` (collective; MODEL.md "Dump"):
// what --dump and tests/model/model_dump_tool share. `backbone` (model.backbone = online)
// computes each micro-batch's context rows first and records the backbone's inputs.
void dump_step(const World& world, Ops& ops, Model& model, const std::vector<float>& params,
               const std::vector<PackedBatch>& micro_batches, const StepKey& key, const std::string& path,
               DumpBackbone* backbone = nullptr);

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
