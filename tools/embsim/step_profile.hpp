// `embsim profile TASK --episodes N --seed S [--chunk-steps K] [--json FILE]`: how long the
// simulator's work takes on this machine, the measurement the RL stage-cost model's simulator
// times come from (src/rl/README.md). The scripted expert runs N collect-split episodes (its own
// time is not counted: in RL the policy acts); every control step is timed in three parts:
//   physics   Env::step, the MuJoCo substeps of one control step
//   render    the observation's camera images (every view, offscreen)
//   features  the stand-in encoder's vl tokens of those images and the instruction
// and summarized as
//   step      physics + render + features: a control step observed, as LIBERO-style envs do
//   chunk     K steps' physics and the last step's render + features: what a simulator does
//             between two policy calls when only the observation the policy sees is rendered
//   reset     Env::reset and the first observation: starting an episode
// Rank 0 measures alone (the others wait): the timings of one process, not of ranks contending.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "observation.hpp"

namespace emb {

struct StepProfileOptions {
  std::string task, mjcf_dir;
  int64_t episodes = 20;
  uint64_t seed = 0;
  int chunk_steps = 4;  // sim.exec_steps' default: the steps executed per policy call
  ObservationOptions observation;
};

// One kind of timing over many samples, in milliseconds.
struct TimingSummary {
  int64_t count = 0;
  double mean_ms = 0, p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  // Log-normal fit of the body: median = p50, sigma = (ln p75 − ln p25) / 1.349 (the normal's
  // interquartile range), robust to the stragglers counted apart below.
  double lognormal_sigma = 0;
  double straggler_fraction = 0;  // samples longer than 3× the median
  double straggler_factor = 0;    // their mean, over the median (0 when there are none)
};

// Throws emb::Error when `seconds` is empty.
TimingSummary summarize_timings(std::vector<double> seconds);

struct StepProfile {
  std::string task;
  int64_t episodes = 0, steps = 0;
  int views = 0, chunk_steps = 0;
  TimingSummary physics, render, features, step, chunk, reset;  // as in the comment at the top
};

// Collective over comm; the profile is complete on rank 0.
StepProfile profile_steps(MPI_Comm comm, const StepProfileOptions& o);

// A table of every timing's summary (what the command prints), and the same as JSON.
std::string profile_table(const StepProfile& p);
nlohmann::json profile_json(const StepProfile& p);

}  // namespace emb
