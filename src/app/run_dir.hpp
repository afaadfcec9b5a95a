// The run directory outputs/<run>/ (DESIGN.md "Timers and outputs"). Rank 0 chooses and
// creates it, every rank learns its path. An existing directory is never reused: the name
// gets a -2, -3, ... suffix, so two runs started in the same second never mix outputs.
#pragma once
#include <mpi.h>

#include <string>

#include "config/run_config.hpp"

namespace emb {

// `run.output_dir`/`run.name` (default "<deck stem>-<YYYYmmdd-HHMMSS>"); writes deck.resolved.
std::string create_run_dir(MPI_Comm comm, const RunConfig& cfg);

// Creates `base`, or `base-2`, `base-3`, ... whichever does not exist yet; returns it.
std::string create_fresh_dir(const std::string& base);

}  // namespace emb
