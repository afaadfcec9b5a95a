// What a training run checks before any step computes, so that a deck that cannot work fails
// in seconds with the deck line to change instead of minutes later, on one rank, mid-run
// (issue 19): the backend this build and the model can run, data.paths not empty, the
// checkpoint directory writable, the model within the node's memory (the plan's bytes per
// rank), and the data files against the deck (every check of embpack verify that reads only
// small arrays, each sample within data.tokens_per_mb, train.global_batch within the dataset).
#pragma once
#include <mpi.h>

#include "config/run_config.hpp"
#include "kernels/ops.hpp"

namespace emb {

// What every rank can check before any collective: run.device built into this embtrain (and
// for cuda a GPU visible on the rank's node: a CUDA build on a CPU node is refused here), the
// model's attention head dims built for it, model.fp8 with a linear on the FP8 path, and
// model.encoders = online with the DreamZero layout.
// Throws emb::Error (exit code 2) naming the deck line.
void check_backend(const RunConfig& cfg);

// What only the rank's Ops can tell (kernels/make_ops.hpp): model.fp8 = on needs a GPU of
// compute capability 9.0 or later.
void check_ops(const RunConfig& cfg, const Ops& ops);

// Local and serial (HDF5 without MPI-IO): run it on one rank and agree on the outcome
// (main.cpp). Throws emb::Error "WHERE: message": deck problems name the deck line of the
// key (exit code 2), data problems the file and dataset path.
// `ranks` in the job (debug.slow_rank one of them), `ranks_on_node` sharing this node's memory.
void check_before_training(const RunConfig& cfg, int ranks, int ranks_on_node);

// data.verify (data/data_verify.hpp): every value of data.paths' files checked, the rows split
// over the ranks of comm, unless (auto) a file records a verify of its current content.
// Collective; after check_before_training. Throws the same emb::Error on every rank.
void verify_data_values(const RunConfig& cfg, MPI_Comm comm);

}  // namespace emb
