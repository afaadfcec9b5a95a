#include "rl/stage_cost.hpp"

#include <cmath>

#include "core/error.hpp"
#include "rl/rng_streams.hpp"

namespace emb {

namespace {

void check_at_least(double value, double lo, const char* key) {
  EMB_CHECK(std::isfinite(value) && value >= lo, "rl.", key, " = ", value, ": must be a finite number >= ", lo);
}

}  // namespace

StageCostModel::StageCostModel(const StageCostConfig& config, uint64_t seed) : config_(config), seed_(seed) {
  check_at_least(config.sim_step_ms, 0, "sim_step_ms");
  check_at_least(config.sim_step_sigma, 0, "sim_step_sigma");
  EMB_CHECK(config.straggler_prob >= 0 && config.straggler_prob <= 1,
            "rl.straggler_prob = ", config.straggler_prob, ": must lie in [0, 1]");
  check_at_least(config.straggler_factor, 1, "straggler_factor");
  check_at_least(config.gen_ms_fixed, 0, "gen_ms_fixed");
  check_at_least(config.gen_ms_per_sample, 0, "gen_ms_per_sample");
  check_at_least(config.train_ms_per_chunk, 0, "train_ms_per_chunk");
  check_at_least(config.time_scale, 1, "cost_time_scale");
}

double StageCostModel::sim_chunk_seconds(uint64_t env_key, int64_t chunk, int steps) const {
  EMB_ASSERT(steps >= 0 && chunk >= 0);
  // Word 0 decides the straggle; step i's normal takes words 2i+2 and 2i+3, so none overlap.
  const CounterRng rng(seed_, rl_stream::stage_cost, env_key, uint64_t(chunk));
  double ms = 0;
  for (int i = 0; i < steps; ++i)
    ms += config_.sim_step_ms * std::exp(config_.sim_step_sigma * rng.normal(uint64_t(i) + 1));
  if (rng.uniform(0) < config_.straggler_prob) ms *= config_.straggler_factor;
  return ms * 1e-3 * config_.time_scale;
}

double StageCostModel::gen_batch_seconds(int batch) const {
  EMB_ASSERT(batch >= 0);
  return (config_.gen_ms_fixed + config_.gen_ms_per_sample * batch) * 1e-3 * config_.time_scale;
}

double StageCostModel::train_seconds(int64_t chunks) const {
  EMB_ASSERT(chunks >= 0);
  return config_.train_ms_per_chunk * double(chunks) * 1e-3 * config_.time_scale;
}

}  // namespace emb
