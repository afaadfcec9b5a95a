// The host time of a rank's loader per step (data/loader.hpp: its samples assembled from the
// shuffle buffer, normalised and packed into micro-batches), timed by --plan on the deck's own
// data on this host. No hardware figure stands for it: its cost is per sample and per feature of
// the deck's data (round 33 of regression/plan_validation.md: 67 µs assembling and 61 µs packing
// tiny_gr00t's 32 samples, where a sample's bytes at memory speed are 8 µs).
#pragma once
#include <cstdint>

#include "config/run_config.hpp"

namespace emb {

struct LoaderTiming {
  int64_t samples = 0;  // per step: a rank's share of train.global_batch
  double step_s = 0;    // the median over the timed steps; 0: no data to time
  int steps = 0;        // timed, after the warm-up's
};

// The loader of `cfg`'s data (`dataset_samples` in its files, as the plan read them) alone on this
// process (MPI_COMM_SELF) and one core, making a rank's steps at `ranks` ranks; {} when data.paths
// names no files yet or they hold too few samples to time. Reads at most 256 MiB of the files into
// its shuffle buffer, whatever data.shuffle_buffer is.
LoaderTiming time_loader(const RunConfig& cfg, int ranks, int64_t dataset_samples);

}  // namespace emb
