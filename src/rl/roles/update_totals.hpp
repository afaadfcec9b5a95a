// The run's totals over every trainer at an update (the trainers step together, so the
// collective that sums them is matched): what the progress line and the learning curve count,
// and what an RL checkpoint keeps so that a resumed run counts on from them.
#pragma once
#include <mpi.h>

#include <cstdint>

namespace emb {

struct LearnerStats;  // rl_learner.hpp

struct UpdateTotals {
  int64_t env_steps = 0, episodes = 0, successes = 0, filtered = 0, dropped_stale = 0, transitions = 0,
          uniform_groups = 0;
  double reward = 0;
};

// Collective over the trainers' communicator.
UpdateTotals update_totals(const LearnerStats& st, MPI_Comm trainers);

// A resumed run's counters start from a checkpoint's totals (kept by one trainer: the sum over
// trainers stays the run's).
void add_totals(LearnerStats& st, const UpdateTotals& t);

}  // namespace emb
