#include "train/trainer.hpp"

#include <algorithm>

#include "checkpoint/checkpoint_dir.hpp"
#include "comm/agreement.hpp"
#include "core/activity.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "train/freezing.hpp"
#include "train/trained_vl_features.hpp"
#include "train/tuned_backbone.hpp"

namespace emb {
namespace {

AdamWConfig adamw_config(const TrainConfig& c) {
  AdamWConfig a;
  a.beta1 = c.beta1, a.beta2 = c.beta2, a.eps = c.eps, a.weight_decay = c.weight_decay;
  return a;
}

// model.backbone = online: the frozen backbone on the run's Ops (bf16 where the model computes
// in bf16 on CUDA), and the loader's prompts from its tokenizer.
std::unique_ptr<OnlineBackbone> online_backbone(const RunConfig& cfg, Ops& ops) {
  if (!cfg.model.online_backbone || cfg.model.tune_visual) return nullptr;
  const bool bf16 = cfg.backend.device == Device::cuda && cfg.model.precision == Precision::bf16;
  return std::make_unique<OnlineBackbone>(ops, cfg.model, bf16 ? DType::bf16 : DType::f32, cfg.run.seed);
}

// model.encoders = online: DreamZero's frozen encoders on the run's Ops (bf16 where the model
// computes in bf16 on CUDA, as DreamZero runs them).
std::unique_ptr<OnlineEncoders> online_encoders(const RunConfig& cfg, Ops& ops) {
  if (!cfg.model.online_encoders) return nullptr;
  const bool bf16 = cfg.backend.device == Device::cuda && cfg.model.precision == Precision::bf16;
  return std::make_unique<OnlineEncoders>(ops, cfg, bf16 ? DType::bf16 : DType::f32);
}

// train.tune_visual: the backbone the step trains (its tensors are the model's).
std::unique_ptr<TunedBackbone> tuned_backbone(const RunConfig& cfg, Ops& ops) {
  if (!cfg.model.tune_visual) return nullptr;
  return std::make_unique<TunedBackbone>(ops, cfg.model, cfg.run.seed);
}

// The run's model, told its frozen tensors (train.tune_*) so that it computes no gradient for
// them; with train.tune_visual its parameters include the vision tower's and mlp1's.
std::unique_ptr<Model> trained_model(const RunConfig& cfg, Ops& ops) {
  auto model = make_model(with_tuned_backbone(cfg.model), &ops);
  model->freeze(frozen_tensors(cfg.model, cfg.train, model->params()));
  return model;
}

// data.normalize = upstream, resumed: the statistics the checkpoint recorded, so the run goes on
// normalising as it started; none for a fresh start (the loader reads the files') or raw values.
// Every rank holds the same meta, so every rank throws alike.
std::optional<NormalizationStatistics> recorded_normalization(const RunConfig& cfg, const CheckpointMeta& meta,
                                                              const std::string& resumed_from) {
  if (resumed_from.empty() || !cfg.data.normalize) return std::nullopt;
  if (meta.normalization.empty())
    throw AgreedError(str(resumed_from, ": records no normalisation statistics (written before data.normalize or with "
                                  "data.normalize = none); resume it with --set data.normalize=none"),
                      kExitInput);
  return statistics_from_json(nlohmann::json::parse(meta.normalization), resumed_from);
}

// Rank 0 reads it; a failure there (a backbone's weights unreadable) fails every rank alike.
VlFeaturesRecord rank0_vl_features(const World& world, const RunConfig& cfg) {
  VlFeaturesRecord record;
  run_agreed(world.comm, [&] {
    if (world.rank == 0) record = trained_vl_features(cfg);
  });
  return record;
}

}  // namespace

DataConfig loader_data_config(const RunConfig& cfg) {
  DataConfig dc = cfg.data;
  dc.online_prompt = online_inputs_prompt(cfg);
  return dc;
}

VlPrompt online_inputs_prompt(const RunConfig& cfg) {
  if (cfg.model.online_backbone) return online_prompt(cfg.model);
  if (cfg.model.online_encoders) return online_encoders_prompt(cfg);
  return nullptr;
}

Trainer::Trainer(const World& world, const RunConfig& cfg, Ops& ops, Comm& comm, PhaseTimers& timers,
                 const InitFrom* init_from)
    : world_(world),
      cfg_(cfg),
      model_(trained_model(cfg, ops)),
      layout_(model_->params(), cfg.train.shard, world.rank, world.size, cfg.train.bucket_bytes, model_->frozen()),
      dp_(layout_, comm, ops, timers, cfg.comm.overlap, cfg.model.precision == Precision::bf16),
      optimizer_([&] {
        const ActivityLabel allocating("AdamW moments");  // what an out-of-memory error names
        return Optimizer(layout_, ops, adamw_config(cfg.train), cfg.train.grad_clip);
      }()),
      schedule_(lr_schedule(cfg.train)),
      resumed_(resume_or_init(init_from)),
      backbone_(online_backbone(cfg, ops)),
      encoders_(online_encoders(cfg, ops)),
      tuned_(tuned_backbone(cfg, ops)),
      recorded_normalization_(recorded_normalization(cfg, resumed_, resumed_from_)),
      vl_features_(rank0_vl_features(world, cfg)),
      loader_(world.comm, loader_data_config(cfg), cfg.model,
              recorded_normalization_ ? &*recorded_normalization_ : nullptr),
      step_{*model_,         dp_,     optimizer_, timers, comm, cfg.run.seed, cfg.train.skip_nonfinite,
            cfg.debug.inject_nan_step,
            cfg.debug.slow_rank < 0 || cfg.debug.slow_rank == world.rank ? cfg.debug.slow_micro_batch_s : 0.0} {
  model_->use_graphs(cfg.backend.cuda_graphs);
  model_->set_context_source(tuned_.get());
  if (!resumed_from_.empty()) loader_.restore(resumed_.sampler);
}

OptimizerState Trainer::host_state() {
  const size_t owned_count = size_t(layout_.owned_total());
  host_params_.resize(owned_count), host_exp_avg_.resize(owned_count), host_exp_avg_sq_.resize(owned_count);
  return OptimizerState{host_exp_avg_.data(), host_exp_avg_sq_.data()};
}

CheckpointMeta Trainer::resume_or_init(const InitFrom* init_from) {
  const TrainConfig& tc = cfg_.train;
  const std::vector<std::string> candidates = resolve_resume(world_.comm, tc.resume, tc.ckpt_dir, cfg_.run_id);
  if (candidates.empty() && init_from) {  // released weights: each rank reads only its shards
    host_state();
    init_from->read_owned(world_.comm, model_->params(), layout_, host_params_.data());
    dp_.load_owned_params(host_params_.data());
    log_info("init_from: ", init_from->path(), " (", model_->params().size(), " tensors under ",
             upstream_family_name(init_from->map().family()), "'s names)");
    return {};
  }
  if (candidates.empty()) {  // a fresh start: each rank draws only what it keeps, the same values whatever the rank count
    dp_.init_owned_params(model_->params(), cfg_.run.seed, cfg_.model.init_std);
    if (cfg_.model.tune_visual) load_tuned_backbone();
    return {};
  }
  const OptimizerState moments = host_state();
  const CheckpointMeta meta = load_first_valid(world_.comm, candidates, cfg_.model.preset, model_->params(), layout_,
                                               host_params_.data(), moments, &resumed_from_);
  dp_.load_owned_params(host_params_.data());
  optimizer_.upload_state(moments);
  if (meta.run_id != cfg_.run_id)
    log_warn(resumed_from_, ": a checkpoint of run '", meta.run_id, "', continued as run '", cfg_.run_id,
             "' (train.resume names it)");
  return meta;
}

// train.tune_visual's tensors start from backbone_dir's values: each rank sets those it owns.
void Trainer::load_tuned_backbone() {
  const std::vector<float> values = tuned_backbone_values(cfg_.model);
  const ParamRegistry& reg = model_->params();
  const int64_t first = reg.get(model_->config().trained_context.front().name).offset;
  host_state();
  dp_.download_owned_params(host_params_.data());
  for (int p = 0; p < layout_.n_pieces(); ++p) {
    const Piece& k = layout_.piece(p);
    const int64_t begin = std::max(k.offset + k.begin, first);
    const int64_t end = std::min(k.offset + k.begin + k.owned_count, first + int64_t(values.size()));
    for (int64_t flat = begin; flat < end; ++flat)
      host_params_[size_t(k.owned_offset + flat - k.offset - k.begin)] = values[size_t(flat - first)];
  }
  dp_.load_owned_params(host_params_.data());
}

StepResult Trainer::step(std::vector<PackedBatch>& micro_batches, int64_t step) {
  if (tuned_)  // the model computes the context rows from its parameters
    for (size_t i = 0; i < micro_batches.size(); ++i)
      if (micro_batches[i].n_samples > 0) tuned_->bind_context(micro_batches[i], int(i));
  if (backbone_) {
    ScopedPhase phase(step_.timers, Phase::backbone);
    for (size_t i = 0; i < micro_batches.size(); ++i)
      if (micro_batches[i].n_samples > 0)
        backbone_->compute_context(micro_batches[i], int(i), step, cfg_.model.backbone_augment);
  }
  if (encoders_) {
    ScopedPhase phase(step_.timers, Phase::encoders);
    for (PackedBatch& b : micro_batches)
      if (b.n_samples > 0) encoders_->compute(b);
  }
  return train_step(step_, micro_batches, step, schedule_.at(step));
}

int64_t Trainer::checkpoint_size() const { return checkpoint_bytes(model_->params(), layout_, cfg_.deck_text.size()); }

std::string Trainer::save(int64_t step) {
  loader_.quiesce();  // HDF5 is not thread-safe: the prefetch thread must be idle
  const NormalizationStatistics* stats = loader_.normalization();
  const CheckpointMeta meta{step,           loader_.state(), cfg_.run.seed, cfg_.model.preset,
                            cfg_.deck_text, world_.size,     cfg_.run_id,       vl_features_,
                            stats ? statistics_json(*stats).dump() : ""};
  const OptimizerState moments = host_state();
  dp_.download_owned_params(host_params_.data());
  optimizer_.download_state(moments);
  return save_checkpoint(world_.comm, cfg_.train.ckpt_dir, model_->params(), layout_, host_params_.data(), moments,
                         meta, cfg_.train.ckpt_keep, step == cfg_.debug.ckpt_fail_step);
}

}  // namespace emb
