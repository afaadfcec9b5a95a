// What a training run checks before any step computes, so that a deck that cannot work fails
// in seconds with the deck line to change instead of minutes later, on one rank, mid-run
// (issue 19): data.paths not empty, the checkpoint directory writable, the model within the
// node's memory (the plan's bytes per rank), and the data files
// against the deck (every check of embpack verify that reads only small arrays, each sample
// within data.tokens_per_mb, train.global_batch within the dataset).
#pragma once

namespace emb {

class Deck;

// Local and serial (HDF5 without MPI-IO): run it on one rank and agree on the outcome
// (main.cpp). Throws emb::Error "WHERE: message": deck problems name the deck line of the
// key (exit code 2), data problems the file and dataset path.
// `ranks` in the job, `ranks_on_node` sharing this node's memory.
void check_before_training(const Deck& deck, int ranks, int ranks_on_node);

}  // namespace emb
