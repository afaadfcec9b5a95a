// The training run behind `mpirun -np N embtrain DECK`: the run directory, the Trainer
// (train/trainer.hpp) stepped under the watchdog, progress lines, checkpoints at their steps
// and on a stop signal, and the run outputs (loss.csv, timings, summary.json).
#pragma once
#include <string>

#include "comm/comm.hpp"
#include "comm/world.hpp"
#include "config/run_config.hpp"
#include "kernels/ops.hpp"
#include "train/init_from.hpp"

namespace emb {

struct TrainResult {
  std::string run_dir;
  int64_t steps = 0;
  double final_loss = 0;
};

// Collective. `ops` is the rank's backend and `comm` the Comm made from it
// (kernels/make_ops.hpp); `init_from` the released weights to start from (null: none).
TrainResult train(const World& world, const RunConfig& cfg, Ops& ops, Comm& comm, const InitFrom* init_from = nullptr);

}  // namespace emb
