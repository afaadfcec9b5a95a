// `embpack lerobot DIR...`: LeRobot v2.1 / v3.0 datasets (lerobot_dataset.hpp) to a gr00t
// packed file. Per episode: state and action rows from the Parquet data (whole columns or
// modality.json slices, concatenated in the file's order), every camera's frame at each
// step's timestamp (from_timestamp + timestamp, rounded to the video's frame grid) resized
// to height × width, the task text of the step's task index, vl tokens from the
// ContextFeatures stand-in encoder; the `modality` attribute from modality.json
// (lerobot_modality.hpp). Recorded per-episode and dataset statistics are
// compared with the data's own (a mismatch is a warning with the numbers).
// Under MPI the episodes are split over the ranks (contiguous blocks), each rank decodes
// its videos with `threads` threads, and every rank writes its share into the one file
// through parallel HDF5 (write_packed with the communicator).
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "lerobot_dataset.hpp"
#include "packed_data.hpp"

namespace emb {

struct LerobotOptions {
  std::vector<std::string> dirs;
  std::string modality;  // "" = each dataset's meta/modality.json when present
  SubKeyChoice keys;     // the state/action sub-keys kept, in order (lerobot_dataset.hpp)
  // GR00T's tag of the data's embodiment (data/gr00t_embodiment_tags.hpp), the projector slot
  // upstream inference uses; "" = embodiment id 0.
  std::string embodiment_tag;
  int height = 64, width = 64, threads = 2;
  int d_vl = 32, vl_grid = 2;
  bool progress = false;
};

struct LerobotReport {
  int64_t episodes = 0, steps = 0, frames_decoded = 0;
  double seconds = 0;
  int ranks = 1, threads = 1;
  std::vector<std::string> warnings;  // statistics that disagree with the recorded ones
  double frames_per_core_second() const { return frames_decoded / (seconds * ranks * threads); }
};

// Collective over `comm` (MPI_COMM_NULL: serial). Returns this rank's share as
// write_packed takes it (the common task list on every rank) and, on rank 0, the report of
// all ranks; an error on any rank is an emb::Error on every rank.
PackedData convert_lerobot(const LerobotOptions& o, MPI_Comm comm, LerobotReport& report);

}  // namespace emb
