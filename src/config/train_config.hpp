// The optimisation, data parallelism and checkpoints of a training run: the deck's [train]
// keys (config/schema.cpp documents each; the key is named beside its field).
#pragma once
#include <cstdint>
#include <string>

namespace emb {

// train.shard: none (DDP), grads (ZeRO-2), full (ZeRO-3); parallel/shard_layout.hpp.
enum class ShardMode { none, grads, full };

inline const char* shard_mode_name(ShardMode m) {
  return m == ShardMode::none ? "none" : m == ShardMode::grads ? "grads" : "full";
}

// train.lr_schedule: the decay after warm-up (train/lr_schedule.hpp).
enum class LrShape { cosine, linear, constant };

struct TrainConfig {
  // optimisation
  int64_t steps = 0;         // train.steps, optimizer steps
  int64_t global_batch = 0;  // train.global_batch, samples per step
  LrShape lr_schedule = LrShape::cosine;  // train.lr_schedule
  double lr = 3e-4, min_lr = 3e-5;        // train.lr, train.min_lr
  int64_t warmup_steps = 0;               // train.warmup_steps, steps
  float beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0;  // train.beta1, beta2, eps, weight_decay
  float grad_clip = 0;          // train.grad_clip, global L2 norm; 0 = off
  bool skip_nonfinite = false;  // train.nan_policy = skip

  // data parallelism
  ShardMode shard = ShardMode::full;  // train.shard
  int64_t bucket_bytes = 0;           // train.bucket_mb (MiB) in bytes

  // checkpoints
  std::string ckpt_dir;      // train.ckpt_dir, or <run.output_dir>/ckpt/<run.name or deck stem>
  int64_t ckpt_every = 0;    // train.ckpt_every, steps; 0 = only on a stop signal
  int ckpt_keep = 0;         // train.ckpt_keep, checkpoints kept; 0 = all
  bool ckpt_stop_on_error = true;  // train.ckpt_on_error = stop (else warn and train on)
  std::string resume;        // train.resume: off, auto or a checkpoint path
  std::string init_from;     // train.init_from: released weights to start from ("" = none)

  // freezing (upstream's fine-tuning flags; train.tune_llm must stay off, train.tune_visual is
  // ModelConfig::tune_visual)
  bool tune_projector = true;        // train.tune_projector
  bool tune_diffusion_model = true;  // train.tune_diffusion_model
  double watchdog_s = 0;     // train.watchdog_s, seconds; 0 = automatic, < 0 = off
  double frozen_peer_s = 0;  // train.frozen_peer_s, seconds; 0 = automatic, < 0 = off
};

}  // namespace emb
