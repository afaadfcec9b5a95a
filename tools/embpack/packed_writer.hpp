// Lays a PackedData out as an `embpack/1` file: tokenizes the instructions, computes the
// normalisation statistics, writes everything to "<out>.tmp", runs the full verifier on it
// and only then renames it to `out`. Any failure leaves no file behind.
//
// With a communicator every rank of it calls write_packed with its share: the episodes it
// converted (rank order is file order), offsets counted from 0 within the share, and the
// global things (family, fps, source, task_text, embodiment dims) identical on every rank,
// episode_task indexing that common task_text. Every row table (steps, episodes, frames,
// features, latents) goes through one collective parallel-HDF5 file, each rank writing
// its rows at the offsets MPI_Exscan gives; rank 0 then adds what only it holds whole
// (attributes, tasks, statistics over rows gathered to it), verifies and renames. The
// serial call is the same layout with one rank. Rank 0 alone throws for a failure of its
// closing steps: callers agree on the exit code afterwards.
#pragma once
#include <mpi.h>

#include <string>

#include "packed_data.hpp"

namespace emb {

void write_packed(const PackedData& share, const std::string& out, const std::string& created_by,
                  MPI_Comm comm = MPI_COMM_NULL);

}  // namespace emb
