// `embsim collect TASK --episodes N --seed S -o demos.h5`: the scripted expert's
// demonstrations as an embpack/1 gr00t file embtrain trains on unchanged. Episode i is the
// collect-split episode (S, i) (sim/env.hpp); ranks run episodes i ≡ rank (mod size), rank 0
// gathers them and writes the file in episode order, so the file is the same at any rank count.
// Only successful demonstrations are kept. Widths are the widest task's (state 24, action 4)
// with each task's own widths as its embodiment's (/embodiments/*), so the files of all tasks
// make one multi-embodiment dataset. Per step: state, action, reward (1 at success), done,
// /video/<view> frames and vl features (observation.hpp); one /tasks entry per paraphrase.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

#include "observation.hpp"

namespace emb {

struct CollectOptions {
  std::string task, output, mjcf_dir;
  int64_t episodes = 100;
  uint64_t seed = 0;
  ObservationOptions observation;
};

struct CollectSummary {
  int64_t episodes = 0, successes = 0, steps = 0;
};

// Collective over comm; rank 0 writes o.output (through a temporary name, verified).
CollectSummary collect(MPI_Comm comm, const CollectOptions& o, const std::string& created_by);

// The widths of every collected file: the widest task's.
int max_state_dim();
int max_action_dim();

}  // namespace emb
