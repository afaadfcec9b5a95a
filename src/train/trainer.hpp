// What a training rank trains with (DESIGN.md "Parallelism", "Checkpoints"): the model on the
// run's Ops, its parameters sharded by ShardLayout and moved by DataParallel, AdamW over the
// owned shard, the loader, and the checkpoints that save and restore all of it. The loop
// around it (progress, watchdog, report) is the application's (app/training_run.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.hpp"
#include "comm/comm.hpp"
#include "comm/world.hpp"
#include "config/run_config.hpp"
#include "core/timer.hpp"
#include "data/loader.hpp"
#include "model/model.hpp"
#include "parallel/data_parallel.hpp"
#include "train/init_from.hpp"
#include "train/lr_schedule.hpp"
#include "train/online_backbone.hpp"
#include "train/online_encoders.hpp"
#include "train/optimizer.hpp"
#include "train/train_step.hpp"
#include "train/tuned_backbone.hpp"

namespace emb {

// The loader's prompts of the run's online encoders (model.backbone = online: the Eagle
// backbone's; model.encoders = online: DreamZero's umT5 prompt), or none.
VlPrompt online_inputs_prompt(const RunConfig& cfg);
// The loader's settings of the run: the deck's data section with the online encoders' prompt.
DataConfig loader_data_config(const RunConfig& cfg);

class Trainer {
 public:
  // Collective. Builds the model and its shards, then resumes from train.resume's checkpoint
  // (any rank count and shard mode), or reads each rank's shards of train.init_from's released
  // weights (`init_from`, opened at start-up; null without), or draws fresh parameters; then
  // starts the loader (after the checkpoint: HDF5 is not thread-safe, and the loader's
  // prefetch thread reads through it).
  Trainer(const World& world, const RunConfig& cfg, Ops& ops, Comm& comm, PhaseTimers& timers,
          const InitFrom* init_from = nullptr);

  // The first step to run: keeps AdamW's bias correction and the LR schedule aligned on resume.
  int64_t first_step() const { return resumed_.step + 1; }
  // The checkpoint resumed from ("" for a fresh start) and what it recorded.
  const std::string& resumed_from() const { return resumed_from_; }
  const CheckpointMeta& resumed() const { return resumed_; }

  // The next step's micro-batches (the data_wait phase).
  std::vector<PackedBatch> next_batches() { return loader_.next_step(); }
  // One optimizer step at the schedule's learning rate (collective); with model.backbone =
  // online it first computes the micro-batches' vl features (the backbone phase).
  StepResult step(std::vector<PackedBatch>& micro_batches, int64_t step);
  double lr(int64_t step) const { return schedule_.at(step); }
  // Collective: writes the checkpoint of `step` into train.ckpt_dir; returns its path.
  std::string save(int64_t step);
  // The bytes a checkpoint takes (the watchdog's allowance for its write).
  int64_t checkpoint_size() const;
  // This rank's AdamW moments on the backend (none for frozen tensors).
  int64_t optimizer_state_bytes() const { return optimizer_.state_bytes(); }

  Model& model() { return *model_; }
  const ParamRegistry& params() const { return model_->params(); }

 private:
  // The owned parameters and AdamW moments staged in host memory on their way to or from a
  // checkpoint.
  OptimizerState host_state();
  // Loads the first loadable checkpoint train.resume names (resumed_from_ = its path), or reads
  // init_from's, or draws this rank's shard of fresh parameters.
  CheckpointMeta resume_or_init(const InitFrom* init_from);
  // train.tune_visual, fresh start: the owned elements of the vision tower and mlp1 set to
  // model.backbone_dir's values.
  void load_tuned_backbone();

  const World& world_;
  const RunConfig& cfg_;
  std::unique_ptr<Model> model_;
  ShardLayout layout_;
  DataParallel dp_;
  Optimizer optimizer_;
  LrSchedule schedule_;
  std::vector<float> host_params_, host_exp_avg_, host_exp_avg_sq_;
  std::string resumed_from_;
  CheckpointMeta resumed_;  // after resumed_from_, which resume_or_init() sets
  std::unique_ptr<OnlineBackbone> backbone_;  // model.backbone = online, frozen
  std::unique_ptr<OnlineEncoders> encoders_;  // model.encoders = online, frozen
  std::unique_ptr<TunedBackbone> tuned_;      // train.tune_visual = on
  std::optional<NormalizationStatistics> recorded_normalization_;  // a resumed run's, data.normalize = upstream
  // Rank 0's: what its checkpoints record (trained_vl_features.hpp). Before the loader: reading
  // the training files' attributes while its prefetch thread reads them would be two threads in
  // HDF5, which is not thread-safe (a crash in H5Fclose).
  VlFeaturesRecord vl_features_;
  Loader loader_;           // after the checkpoint was read

  StepContext step_;
};

}  // namespace emb
