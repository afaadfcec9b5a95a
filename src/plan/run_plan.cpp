#include "plan/run_plan.hpp"

#include <algorithm>
#include <cmath>

#include "data/packed_dataset.hpp"
#include "model/model.hpp"
#include "plan/backbone_cost.hpp"
#include "plan/config_search.hpp"
#include "plan/data_files.hpp"
#include "plan/loader_cost.hpp"
#include "plan/plan_batches.hpp"
#include "train/freezing.hpp"
#include "train/online_backbone.hpp"
#include "train/tuned_backbone.hpp"

namespace emb {
namespace {

// The data's samples, mean, spread and longest context, when the files of data.paths are there.
struct DataShape {
  int64_t samples = 0;  // 0: unknown
  int64_t mean_context = 0, max_context = 0;
  double context_std = 0;
};

DataShape data_shape(const DataConfig& dc, const ModelConfig& mc) {
  const std::vector<std::string> paths = present_data_files(dc);
  if (paths.empty()) return {};  // no data yet: the plan still answers, with the typical sample and no epoch time
  const PackedDataset data(MPI_COMM_SELF, dc.mpio_transfer, paths, mc, dc.view);
  return {data.samples(), std::llround(data.mean_context_tokens()), data.max_context_tokens(), data.context_tokens_std()};
}

// The tensors the run's train.tune_* flags freeze (train/freezing.hpp), as the trainer decides them.
std::vector<bool> frozen_of_run(const RunConfig& cfg) {
  const std::unique_ptr<Model> model = make_model(with_tuned_backbone(cfg.model), nullptr);  // its registry only
  return frozen_tensors(cfg.model, cfg.train, model->params());
}

}  // namespace

Workload workload_of_run(const RunConfig& cfg, int world_size) {
  const ModelConfig& mc = cfg.model;
  Workload w;
  w.model = with_tuned_backbone(mc);  // train.tune_visual: the vision tower's parameters are the model's
  w.ranks = cfg.plan.ranks > 0 ? cfg.plan.ranks : world_size;
  w.global_batch = cfg.train.global_batch;
  w.packing = cfg.data.packing;
  w.tokens_per_mb = cfg.data.tokens_per_mb;
  w.micro_batch = cfg.plan.micro_batch;
  w.shard = cfg.train.shard;
  w.bucket_bytes = double(cfg.train.bucket_bytes);
  w.overlap = cfg.comm.overlap;
  w.cuda_graphs = cfg.backend.cuda_graphs;
  w.fp8 = mc.fp8;
  w.frozen = frozen_of_run(cfg);
  if (mc.tune_visual || mc.online_backbone) {
    const encoders::EagleDims eagle = online_backbone_dims(mc);
    const int views = cfg.plan.backbone_views;
    const bool bf16 = cfg.backend.device == Device::cuda && mc.precision == Precision::bf16;  // the trainer's storage
    const int64_t prompt = eagle_prompt_tokens(eagle, views, cfg.plan.instruction_tokens);
    const BackboneMemory b = backbone_memory(mc, eagle, views, prompt, bf16 ? 2 : 4);
    w.frozen_weight_bytes = b.weight_bytes;
    w.context_activation_bytes_per_sample = b.activation_bytes_per_sample;
  }
  const DataShape data = data_shape(cfg.data, mc);
  w.dataset_samples = cfg.plan.dataset_samples > 0 ? cfg.plan.dataset_samples : data.samples;
  // Packed samples cost their mean context; padded ones (packing = off) data.pad_context, or
  // the longest context, as the loader pads them.
  w.sample.context_tokens = data.mean_context;
  w.sample.context_tokens_std = data.context_std;
  w.longest_context = data.max_context;
  w.loader_s = time_loader(cfg, w.ranks, data.samples).step_s;
  if (!w.packing) w.sample.padded_context = std::max(cfg.data.pad_context, data.max_context);
  return w;
}

RunPlan plan_run(const RunConfig& cfg, int world_size) {
  const PlanBatchScope batches;  // the run's samples built once for every prediction below
  RunPlan p;
  p.hw = load_hardware(cfg.plan.hardware);
  Workload w = workload_of_run(cfg, world_size);
  w.elementwise = model_elementwise_work(p.hw, w);
  p.as_deck = predict_step(p.hw, w);
  p.ranked = rank_configurations(p.hw, w);
  // The memory plan is the micro-batch the prediction costs (train.micro_batch samples when
  // padded and set, else what data.tokens_per_mb holds), so the two never disagree.
  p.memory = make_plan(w.model, w.ranks, p.as_deck.tokens_per_mb, w.sample, planned_blocks_dtype(p.hw, w.model),
                       w.sharding());
  return p;
}

}  // namespace emb
