// The options of an RL run: the deck's [rl] keys, and what the run shares with training (seed,
// backend, watchdog, fault injection) from its RunConfig (config/schema.cpp documents each key;
// embsim's rl_options_from_deck reads them). The policy's model comes from rl.init's checkpoint.
#pragma once
#include <cstdint>
#include <string>

#include "config/run_config.hpp"
#include "rl/roles/policy_batch.hpp"
#include "rl/grpo.hpp"
#include "rl/ppo.hpp"
#include "rl/stage_cost.hpp"

namespace emb {

enum class RlMode { sync, async_rollout, async };
const char* rl_mode_name(RlMode m);

struct RlOptions {
  std::string deck_path, deck_text;  // the resolved deck (stored in checkpoints beside the SFT deck)
  RlMode mode = RlMode::async;
  std::string preset;  // model.preset: must be the checkpoint's
  std::string init, task, ckpt_dir, mjcf_dir;  // the run directory comes from [run] (create_run_dir)
  std::string resume = "off";  // train.resume: off, auto (the newest in ckpt_dir) or a checkpoint path
  std::string run_id;          // checkpoint/run_identity.hpp: stored in its checkpoints, what resume = auto continues
  uint64_t seed = 0;
  BackendConfig backend;  // run.device: where generators and trainers compute
  int simulators = 1, generators = 1, trainers = 0;
  int envs_per_simulator = 8, max_batch = 32, channel_capacity = 16, segment_chunks = 8;
  double batch_timeout_ms = 5;
  int update_chunks = 256, micro_chunks = 64, updates = 40, max_staleness = 4, critic_warmup = 5, ppo_epochs = 1;
  int value_steps = 1;
  double lr = 3e-5, value_lr = 1e-3, gamma = 0.99, gae_lambda = 0.95, noise_level = 0.5;
  SdeSteps sde_steps = SdeSteps::one;  // rl.sde_steps
  PpoConfig ppo;
  enum class Reward { sparse, shaped, action_probe } reward = Reward::shaped;  // rl.reward
  Advantage advantage = Advantage::gae;  // rl.advantage
  int group_size = 8;                    // rl.group_size (grpo)
  int ckpt_every = 0;
  StageCostConfig cost;
  double watchdog_s = 120;  // a rank that hears nothing it waits for this long fails the run
  int fail_rank = -1;        // debug.fail_rank: this world rank dies at debug.fail_step chunks / steps
  int64_t fail_step = 1;
  InjectedFailure fail_how = InjectedFailure::error;  // debug.fail_how
};

}  // namespace emb
