#include <algorithm>
#include <cmath>
#include <filesystem>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "data/data_config.hpp"
#include "data/packed_dataset.hpp"
#include "model/plan.hpp"
#include "model/presets.hpp"
#include "plan/config_search.hpp"
#include "plan/plan_output.hpp"
#include "plan/step_model.hpp"
#include "train/commands.hpp"

namespace emb {
namespace {

// The data's samples, mean and longest context, when the files of data.paths are there.
struct DataShape {
  int64_t samples = 0;  // 0: unknown
  int64_t mean_context = 0, max_context = 0;
};

DataShape data_shape(const Deck& deck, const ModelConfig& mc) {
  std::vector<std::string> paths;
  try {
    paths = expand_paths(deck.get_list("data.paths"));
  } catch (const Error&) {
    return {};  // no data yet: the plan still answers, with the typical sample and no epoch time
  }
  for (const std::string& path : paths)
    if (!std::filesystem::exists(path)) return {};
  if (paths.empty()) return {};
  const DataConfig dc = data_config_from_deck(deck);
  const PackedDataset data(MPI_COMM_SELF, dc.mpio_transfer, paths, mc, dc.view);
  return {data.samples(), std::llround(data.mean_context_tokens()), data.max_context_tokens()};
}

}  // namespace

std::string plan_report(const Deck& deck, int world_size) {
  const ModelConfig mc = model_config_from_deck(deck);
  const int64_t ranks_key = deck.get_int("train.ranks");
  const int ranks = ranks_key > 0 ? int(ranks_key) : world_size;
  const Hardware hw = load_hardware(hardware_name(deck));

  Workload w;
  w.model = mc;
  w.ranks = ranks;
  w.global_batch = deck.get_int("train.global_batch");
  w.packing = deck.get_string("data.packing") == "on";
  w.tokens_per_mb = deck.get_int("data.tokens_per_mb");
  w.micro_batch = deck.get_int("train.micro_batch");
  w.shard = deck.get_string("train.shard");
  w.bucket_bytes = deck.get_double("train.bucket_mb") * (1 << 20);
  w.overlap = deck.get_string("comm.overlap") == "on";
  w.fp8 = deck.get_string("model.fp8") == "on";
  const DataShape data = data_shape(deck, mc);
  const int64_t samples_key = deck.get_int("plan.dataset_samples");
  w.dataset_samples = samples_key > 0 ? samples_key : data.samples;
  // Packed samples cost their mean context; padded ones (packing = off) data.pad_context, or
  // the longest context, as the loader pads them.
  w.sample.context_tokens = data.mean_context;
  if (!w.packing) w.sample.padded_context = std::max(deck.get_int("data.pad_context"), data.max_context);

  const StepPrediction as_deck = predict_step(hw, w);
  const std::vector<StepPrediction> ranked = rank_configurations(hw, w);
  std::string json_path = deck.get_string("plan.json");
  if (json_path.empty()) json_path = deck.get_string("run.output_dir") + "/plan/" + deck.stem() + ".json";
  std::filesystem::create_directories(std::filesystem::path(json_path).parent_path());
  nlohmann::json json = plan_json(hw, as_deck, ranked);
  std::string backbone;
  if (mc.family == Family::gr00t) {  // the released backbone's cost beside the head's
    const encoders::EagleDims eagle;
    const int views = int(deck.get_int("plan.backbone_views"));
    const BackboneCost b = eagle_backbone_cost(
        hw, eagle, views, eagle_prompt_tokens(eagle, views, deck.get_int("plan.instruction_tokens")));
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
