#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "data/packed_dataset.hpp"
#include "plan/config_search.hpp"
#include "plan/model_cost.hpp"
#include "plan/plan_output.hpp"
#include "plan/step_model.hpp"
#include "app/commands.hpp"

namespace emb {
namespace {

// The data's samples, mean and longest context, when the files of data.paths are there.
struct DataShape {
  int64_t samples = 0;  // 0: unknown
  int64_t mean_context = 0, max_context = 0;
};

DataShape data_shape(const DataConfig& dc, const ModelConfig& mc) {
  std::vector<std::string> paths;
  try {
    paths = expand_paths(dc.paths);
  } catch (const Error&) {
    return {};  // no data yet: the plan still answers, with the typical sample and no epoch time
  }
  for (const std::string& path : paths)
    if (!std::filesystem::exists(path)) return {};
  if (paths.empty()) return {};
  const PackedDataset data(MPI_COMM_SELF, dc.mpio_transfer, paths, mc, dc.view);
  return {data.samples(), std::llround(data.mean_context_tokens()), data.max_context_tokens()};
}

}  // namespace

std::string plan_report(const RunConfig& cfg, int world_size) {
  const ModelConfig& mc = cfg.model;
  const int ranks = cfg.plan.ranks > 0 ? cfg.plan.ranks : world_size;
  const Hardware hw = load_hardware(cfg.plan.hardware);

  Workload w;
  w.model = mc;
  w.ranks = ranks;
  w.global_batch = cfg.train.global_batch;
  w.packing = cfg.data.packing;
  w.tokens_per_mb = cfg.data.tokens_per_mb;
  w.micro_batch = cfg.plan.micro_batch;
  w.shard = cfg.train.shard;
  w.bucket_bytes = double(cfg.train.bucket_bytes);
  w.overlap = cfg.comm.overlap;
  w.fp8 = mc.fp8;
  const DataShape data = data_shape(cfg.data, mc);
  w.dataset_samples = cfg.plan.dataset_samples > 0 ? cfg.plan.dataset_samples : data.samples;
  // Packed samples cost their mean context; padded ones (packing = off) data.pad_context, or
  // the longest context, as the loader pads them.
  w.sample.context_tokens = data.mean_context;
  if (!w.packing) w.sample.padded_context = std::max(cfg.data.pad_context, data.max_context);

  const StepPrediction as_deck = predict_step(hw, w);
  const std::vector<StepPrediction> ranked = rank_configurations(hw, w);
  const std::string& json_path = cfg.plan.json;
  std::filesystem::create_directories(std::filesystem::path(json_path).parent_path());
  nlohmann::json json = plan_json(hw, as_deck, ranked);
  std::string backbone;
  if (mc.family == Family::gr00t) {  // the released backbone's cost beside the head's
    const encoders::EagleDims eagle;
    const int views = cfg.plan.backbone_views;
    const BackboneCost b =
        eagle_backbone_cost(hw, eagle, views, eagle_prompt_tokens(eagle, views, cfg.plan.instruction_tokens));
    backbone = backbone_text(hw, b, as_deck);
    json["backbone"] = backbone_json(b, as_deck);
  }
  write_file_atomic(json_path, json.dump(2) + "\n");
  // The header's memory plan is the micro-batch the prediction costs (train.micro_batch samples
  // when padded and set, else what data.tokens_per_mb holds), so the two never disagree.
  return plan_text(make_plan(mc, ranks, as_deck.tokens_per_mb, w.sample, planned_blocks_dtype(hw, mc))) +
         prediction_text(hw, as_deck, ranked, 10) + backbone + str("JSON: ", json_path, "\n");
}

}  // namespace emb
