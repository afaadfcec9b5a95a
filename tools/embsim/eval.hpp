// `embsim eval TARGET --task T[,T...] --episodes N --seed S`: closed-loop success rates.
// TARGET is a checkpoint, a checkpoint directory or a run directory (every complete and
// intact checkpoint, by step: verified_checkpoints), or a baseline: expert, zero, random.
// Episode i of a task is the eval-split episode (S, i) (sim/env.hpp: never one that
// collection used); ranks run episodes i ≡ rank (mod size) together, every environment of
// a rank stepping in lockstep so the policy sees all of them in one batch. Each episode's
// outcome depends only on (S, i) and the policy, so the rates are the same at any rank
// count. Writes OUT/eval.json:
//   {"target", "policy", "seed", "episodes", "flow_steps", "exec_steps",
//    "checkpoints": [{"step", "path", "tasks": {TASK: {"success_rate", "ci95": [lo, hi],
//                     "successes", "episodes", "mean_length", "lengths": [...],
//                     "success": [0/1 per episode], "seeds": [[S, i], ...]}}}],
//    "tasks": the last checkpoint's (or the baseline's) tasks}
// and OUT/videos/<task>_step<step>_ep<i>.mp4 for the first --videos episodes of each task
// (the last checkpoint only; both camera views side by side).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "observation.hpp"
#include "policy.hpp"

namespace emb {

struct EvalOptions {
  std::string target;
  std::vector<std::string> tasks;
  int64_t episodes = 50;
  uint64_t seed = 0;
  std::string out_dir, mjcf_dir;
  int videos = 2;
  ObservationOptions observation;
  std::vector<std::string> deck_sets;  // --set overrides of the checkpoint's deck ([sim] keys, run.device)
  int local_rank = 0;                  // among the ranks of this node (the GPU of run.device = cuda)
};

struct TaskResult {
  std::string task;
  std::vector<int> success, lengths;  // per episode, in episode order
  int64_t successes() const;
  double rate() const;
};

// Wilson score interval at 95% for k successes in n trials.
std::array<double, 2> wilson95(int64_t k, int64_t n);

// Collective: one task's episodes under `policy`; the result is complete on rank 0.
// video_prefix non-empty: the first `videos` episodes are written to <video_prefix>_ep<i>.mp4.
TaskResult evaluate_task(MPI_Comm comm, Policy& policy, const TaskSpec& task, const EvalOptions& o,
                         const std::string& video_prefix);

// Collective: the whole command; returns eval.json's path.
std::string run_eval(MPI_Comm comm, const EvalOptions& o);

}  // namespace emb
