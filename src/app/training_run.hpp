// The training run behind `mpirun -np N embtrain DECK`: model, data, sharded data
// parallelism, AdamW with the LR schedule, phase timers, progress lines and the run outputs.
#pragma once
#include <string>

#include "comm/comm.hpp"
#include "comm/world.hpp"

namespace emb {

class Deck;

struct TrainResult {
  std::string run_dir;
  int64_t steps = 0;
  double final_loss = 0;
};

// The deck checks every rank can make before any collective: model and data keys, and
// features this build does not have yet. Throws emb::Error (exit code 2). main() runs it on
// every rank and agrees on the outcome before train().
void validate_training_deck(const Deck& deck);

TrainResult train(const World& world, const Deck& deck, Comm& comm);

}  // namespace emb
