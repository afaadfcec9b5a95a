#include "rl_options_from_deck.hpp"

#include "core/error.hpp"
#include "sim/task.hpp"

namespace emb {

RlOptions rl_options_from_deck(const Deck& deck, const RunConfig& run) {
  RlOptions o;
  o.deck_path = run.deck_path;
  o.deck_text = run.deck_text;
  const std::string mode = deck.get_string("rl.mode");
  o.mode = mode == "sync" ? RlMode::sync : mode == "async_rollout" ? RlMode::async_rollout : RlMode::async;
  o.init = deck.get_string("rl.init");
  EMB_CHECK(!o.init.empty(), where_set(deck, "rl.init"), ": rl.init must name the SFT checkpoint RL starts from");
  o.preset = run.model.preset;
  o.task = deck.get_string("rl.task");
  task_spec(o.task);  // throws naming the known tasks
  o.ckpt_dir = deck.get_string("rl.ckpt_dir");
  o.resume = run.train.resume;
  o.run_id = run.run_id;
  // A resumed run needs the checkpoints of the one before it: train.ckpt_dir's default (stable
  // across restarts) instead of a directory inside the new run's own.
  if (o.ckpt_dir.empty() && o.resume != "off") o.ckpt_dir = run.train.ckpt_dir;
  o.seed = run.run.seed;
  o.backend = run.backend;
  o.simulators = int(deck.get_int("rl.simulators")), o.generators = int(deck.get_int("rl.generators"));
  o.trainers = int(deck.get_int("rl.trainers"));
  o.envs_per_simulator = int(deck.get_int("rl.envs_per_simulator"));
  o.max_batch = int(deck.get_int("rl.max_batch"));
  o.batch_timeout_ms = deck.get_double("rl.batch_timeout_ms");
  o.channel_capacity = int(deck.get_int("rl.channel_capacity"));
  o.segment_chunks = int(deck.get_int("rl.segment_chunks"));
  o.update_chunks = int(deck.get_int("rl.update_chunks")), o.micro_chunks = int(deck.get_int("rl.micro_chunks"));
  o.updates = int(deck.get_int("rl.updates")), o.max_staleness = int(deck.get_int("rl.max_staleness"));
  o.critic_warmup = int(deck.get_int("rl.critic_warmup"));
  o.ppo_epochs = int(deck.get_int("rl.ppo_epochs"));
  o.value_steps = int(deck.get_int("rl.value_steps"));
  o.lr = deck.get_double("rl.lr"), o.value_lr = deck.get_double("rl.value_lr");
  o.gamma = deck.get_double("rl.gamma"), o.gae_lambda = deck.get_double("rl.gae_lambda");
  o.noise_level = deck.get_double("rl.noise_level");
  o.sde_steps = sde_steps_from_name(deck.get_string("rl.sde_steps"));
  o.ppo.clip = deck.get_double("rl.clip"), o.ppo.dual_clip = deck.get_double("rl.dual_clip");
  o.ppo.behav_weight_max = deck.get_double("rl.behav_weight_max");
  const std::string reward = deck.get_string("rl.reward");
  o.reward = reward == "sparse" ? RlOptions::Reward::sparse
             : reward == "shaped" ? RlOptions::Reward::shaped
                                  : RlOptions::Reward::action_probe;
  o.advantage = advantage_from_name(deck.get_string("rl.advantage"));
  o.group_size = int(deck.get_int("rl.group_size"));
  o.ckpt_every = int(deck.get_int("rl.ckpt_every"));
  o.cost.on = deck.get_string("rl.cost_model") == "on";
  o.cost.sim_step_ms = deck.get_double("rl.sim_step_ms"), o.cost.sim_step_sigma = deck.get_double("rl.sim_step_sigma");
  o.cost.straggler_prob = deck.get_double("rl.straggler_prob");
  o.cost.straggler_factor = deck.get_double("rl.straggler_factor");
  o.cost.gen_ms_fixed = deck.get_double("rl.gen_ms_fixed"), o.cost.gen_ms_per_sample = deck.get_double("rl.gen_ms_per_sample");
  o.cost.train_ms_per_chunk = deck.get_double("rl.train_ms_per_chunk");
  o.cost.time_scale = deck.get_double("rl.cost_time_scale");
  o.watchdog_s = run.train.watchdog_s > 0 ? run.train.watchdog_s : 120;
  o.fail_rank = int(run.debug.fail_rank), o.fail_step = run.debug.fail_step, o.fail_how = run.debug.fail_how;
  EMB_CHECK(o.update_chunks % o.micro_chunks == 0, where_set(deck, "rl.update_chunks"), ": rl.update_chunks = ",
            o.update_chunks, " is not a multiple of rl.micro_chunks = ", o.micro_chunks);
  if (o.advantage == Advantage::grpo) {
    // A group's episodes reset together, so its environments wait for each other between
    // episodes; lockstep rounds would wait on them too.
    EMB_CHECK(o.mode == RlMode::async, where_set(deck, "rl.advantage"), ": rl.advantage = grpo needs rl.mode = async");
    EMB_CHECK(o.envs_per_simulator % o.group_size == 0, where_set(deck, "rl.group_size"), ": rl.group_size = ",
              o.group_size, " does not divide rl.envs_per_simulator = ", o.envs_per_simulator);
  }
  return o;
}

}  // namespace emb
