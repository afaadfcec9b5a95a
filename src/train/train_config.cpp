#include "train/train_config.hpp"

#include "plan/hardware.hpp"
#include "checkpoint/run_identity.hpp"

namespace emb {
namespace {

// train.ckpt_dir, or <run.output_dir>/ckpt/<run.name or deck stem>: stable across restarts,
// so a requeued job with train.resume = auto finds the checkpoints of the one before it.
std::string checkpoint_dir(const Deck& deck) {
  std::string dir = deck.get_string("train.ckpt_dir");
  if (!dir.empty()) return dir;
  std::string name = deck.get_string("run.name");
  return deck.get_string("run.output_dir") + "/ckpt/" + (name.empty() ? deck.stem() : name);
}

}  // namespace

TrainConfig train_config_from_deck(const Deck& deck) {
  TrainConfig c;
  c.seed = uint64_t(deck.get_int("run.seed"));
  c.log_every = deck.get_int("run.log_every");
  c.deck_text = deck.resolved_text();
  c.run_id = run_identity(deck);
  c.hardware = hardware_name(deck);

  c.total_steps = deck.get_int("train.steps");
  c.global_batch = deck.get_int("train.global_batch");
  c.lr = LrSchedule{lr_shape_from_name(deck.get_string("train.lr_schedule")), deck.get_double("train.lr"),
                    deck.get_double("train.min_lr"), deck.get_int("train.warmup_steps"), c.total_steps};
  c.adamw.beta1 = float(deck.get_double("train.beta1"));
  c.adamw.beta2 = float(deck.get_double("train.beta2"));
  c.adamw.eps = float(deck.get_double("train.eps"));
  c.adamw.weight_decay = float(deck.get_double("train.weight_decay"));
  c.grad_clip = float(deck.get_double("train.grad_clip"));
  c.skip_nonfinite = deck.get_string("train.nan_policy") == "skip";

  c.shard_name = deck.get_string("train.shard");
  c.shard = shard_mode_from_name(c.shard_name);
  c.bucket_bytes = int64_t(deck.get_double("train.bucket_mb") * (1 << 20));
  c.overlap_comm = deck.get_string("comm.overlap") == "on";
  c.tokens_per_mb = deck.get_int("data.tokens_per_mb");

  c.ckpt_dir = checkpoint_dir(deck);
  c.ckpt_every = deck.get_int("train.ckpt_every");
  c.ckpt_keep = int(deck.get_int("train.ckpt_keep"));
  c.ckpt_stop_on_error = deck.get_string("train.ckpt_on_error") == "stop";
  c.resume = deck.get_string("train.resume");
  c.watchdog_s = deck.get_double("train.watchdog_s");

  c.inject_nan_step = deck.get_int("debug.inject_nan_step");
  c.fail_rank = deck.get_int("debug.fail_rank");
  c.fail_step = deck.get_int("debug.fail_step");
  c.ckpt_fail_step = deck.get_int("debug.ckpt_fail_step");
  c.slow_micro_batch_s = deck.get_double("debug.slow_step_ms") * 1e-3;
  return c;
}

}  // namespace emb
