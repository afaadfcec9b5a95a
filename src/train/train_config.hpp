// The settings train() runs with, read from the deck once (config/schema.cpp documents each
// key; the key is named beside its field). The model's and the data's own settings stay in
// ModelConfig and DataConfig.
#pragma once
#include <cstdint>
#include <string>

#include "config/deck.hpp"
#include "kernels/op_types.hpp"
#include "train/lr_schedule.hpp"
#include "parallel/shard_layout.hpp"

namespace emb {

struct TrainConfig {
  // run.*
  uint64_t seed = 0;         // run.seed
  int64_t log_every = 0;     // run.log_every, steps
  std::string deck_text;     // the resolved deck, stored in every checkpoint
  std::string run_id;        // run_identity.hpp: a fingerprint of the deck
  std::string hardware;      // plan.hardware, or the default of run.device (the report's peak FLOP/s)

  // optimisation
  int64_t total_steps = 0;   // train.steps, optimizer steps
  int64_t global_batch = 0;  // train.global_batch, samples per step (logged)
  LrSchedule lr;             // train.lr_schedule, lr, min_lr, warmup_steps (steps), steps
  AdamWConfig adamw;         // train.beta1, beta2, eps, weight_decay (lr is set per step)
  float grad_clip = 0;       // train.grad_clip, global L2 norm; 0 = off
  bool skip_nonfinite = false;  // train.nan_policy = skip

  // data parallelism
  ShardMode shard = ShardMode::full;  // train.shard
  std::string shard_name;             // train.shard as written (logged)
  int64_t bucket_bytes = 0;           // train.bucket_mb (MiB) in bytes
  bool overlap_comm = true;           // comm.overlap = on
  int64_t tokens_per_mb = 0;          // data.tokens_per_mb, tokens (the plan's typical sample)

  // checkpoints
  std::string ckpt_dir;      // train.ckpt_dir, or <run.output_dir>/ckpt/<run.name or deck stem>
  int64_t ckpt_every = 0;    // train.ckpt_every, steps; 0 = only on a stop signal
  int ckpt_keep = 0;         // train.ckpt_keep, checkpoints kept; 0 = all
  bool ckpt_stop_on_error = true;  // train.ckpt_on_error = stop (else warn and train on)
  std::string resume;        // train.resume: off, auto or a checkpoint path
  double watchdog_s = 0;     // train.watchdog_s, seconds; 0 = automatic, < 0 = off

  // debug.*
  int64_t inject_nan_step = 0;  // debug.inject_nan_step, step; 0 = never
  int64_t fail_rank = -1;       // debug.fail_rank; -1 = none
  int64_t fail_step = 0;        // debug.fail_step, step
  int64_t ckpt_fail_step = 0;   // debug.ckpt_fail_step, step; 0 = never
  double slow_micro_batch_s = 0;  // debug.slow_step_ms in seconds, slept per micro-batch
};

TrainConfig train_config_from_deck(const Deck& deck);

}  // namespace emb
