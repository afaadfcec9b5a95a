// The stage-cost model of asynchronous RL on one machine (README.md "Stage-cost model"). Every
// rank group (simulators, generators, trainers) shares the same two cores here, so real stage
// times say nothing about a cluster where each group has its own CPUs or GPU. As comm.fabric_*
// models a network, this models each stage's time: a simulator chunk is the sum of log-normal
// control-step times (the spread measured on the MuJoCo tasks by `embsim profile`), sometimes
// multiplied by a straggler factor; a generator batch and a trainer update take GPU-like
// affine times. Draws are pure functions of (seed, env key, chunk index), so a run's modelled
// times do not depend on the rank count or on the order in which stages happen to run.
#pragma once
#include <cstdint>

namespace emb {

// The deck's [rl] cost keys (rl.cost_model, rl.sim_step_ms, ...); times in milliseconds.
struct StageCostConfig {
  bool on = false;
  double sim_step_ms = 0;         // median of one control step of one environment
  double sim_step_sigma = 0;      // standard deviation of the log of a step's time
  double straggler_prob = 0;      // chance that a chunk straggles
  double straggler_factor = 1;    // a straggling chunk takes this many times as long
  double gen_ms_fixed = 0;        // per generator batch (launch, the K flow steps' fixed cost)
  double gen_ms_per_sample = 0;   // per sample of a generator batch
  double train_ms_per_chunk = 0;  // per transition of a trainer update (forward + backward)
  // Every modelled time runs this many times slower in wall time, so the real compute of all
  // groups sharing a few cores stays hidden under the model; rates measured in wall time are
  // multiplied back by it (the schedule, and so every sync / async ratio, is scale-free).
  double time_scale = 1;
};

class StageCostModel {
 public:
  // Throws emb::Error naming the rl.* key when a value is out of range.
  StageCostModel(const StageCostConfig& config, uint64_t seed);

  const StageCostConfig& config() const { return config_; }
  bool on() const { return config_.on; }

  // Wall seconds (modelled × time_scale) environment `env_key` takes for `steps` control steps of its chunk `chunk`:
  // Σ_i sim_step_ms·exp(sigma·z_i), times straggler_factor with probability straggler_prob.
  double sim_chunk_seconds(uint64_t env_key, int64_t chunk, int steps) const;
  // Seconds of one generator batch: gen_ms_fixed + gen_ms_per_sample·batch.
  double gen_batch_seconds(int batch) const;
  // Seconds a trainer spends on `chunks` transitions: train_ms_per_chunk·chunks.
  double train_seconds(int64_t chunks) const;

 private:
  StageCostConfig config_;
  uint64_t seed_;
};

}  // namespace emb
