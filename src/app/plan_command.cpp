#include <filesystem>

#include "app/commands.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "plan/backbone_cost.hpp"
#include "plan/encoder_cost.hpp"
#include "plan/plan_output.hpp"
#include "plan/run_plan.hpp"
#include "train/online_backbone.hpp"

namespace emb {
namespace {

// gr00t: the backbone's cost per sample beside the head's, in the text (returned) and the JSON
// ("backbone"); other families: "". The released backbone's, or with model.backbone = online
// the deck's (model.backbone_dir), whose forward then is part of every step.
std::string backbone_report(const RunConfig& cfg, const RunPlan& p, nlohmann::json& json) {
  if (cfg.model.family != Family::gr00t) return "";
  const encoders::EagleDims eagle = cfg.model.online_backbone ? online_backbone_dims(cfg.model) : encoders::EagleDims{};
  const int views = cfg.plan.backbone_views;
  const BackboneCost b =
      eagle_backbone_cost(p.hw, eagle, views, eagle_prompt_tokens(eagle, views, cfg.plan.instruction_tokens));
  json["backbone"] = backbone_json(b, p.as_deck);
  json["backbone"]["in_step"] = cfg.model.online_backbone;
  std::string text = backbone_text(p.hw, b, p.as_deck);
  const Workload& w = p.as_deck.w;
  if (cfg.model.online_backbone && !cfg.model.tune_visual) {
    json["backbone"]["memory_bytes_per_rank"] = {
        {"weights", w.frozen_weight_bytes},
        {"forward_per_sample", w.context_activation_bytes_per_sample},
        {"forward_per_micro_batch", w.context_activation_bytes_per_sample * p.as_deck.samples_per_mb}};
    text += str("  model.backbone = online: this deck's step runs it (the backbone phase): + ", b.flops() / 1e12,
                " TFLOP per sample; device memory + ", w.frozen_weight_bytes / double(1ull << 30), " GiB of weights and ",
                w.context_activation_bytes_per_sample * p.as_deck.samples_per_mb / double(1ull << 20),
                " MiB of forward buffers per micro-batch (", p.as_deck.samples_per_mb,
                " samples; in the memory verdict above)\n");
  }
  if (cfg.model.tune_visual) {
    const double micro_batch_bytes = b.tuned_activation_bytes * p.memory.samples_per_mb;
    const double llm_bytes = tuned_frozen_weight_bytes(eagle);
    json["backbone"]["tune_visual"] = {{"flops_per_sample", b.tuned_flops},
                                       {"activation_bytes_per_sample", b.tuned_activation_bytes},
                                       {"activation_bytes_per_micro_batch", micro_batch_bytes},
                                       {"frozen_llm_weight_bytes", llm_bytes}};
    text += str("  train.tune_visual = on: the vision tower and mlp1 trained through the frozen LLM (fp32): ",
                b.tuned_flops / 1e12, " TFLOP per sample instead of the forward's; ", micro_batch_bytes / double(1ull << 20),
                " MiB of kept activations per micro-batch (", p.memory.samples_per_mb,
                " samples, in the memory verdict above); their parameters, gradients and AdamW moments, and the "
                "frozen LLM's fp32 weights (", llm_bytes / double(1ull << 30), " GiB), are in the state above\n");
  }
  return text;
}

// wan: DreamZero's frozen encoders' cost per sample beside the DiT's (the released encoders on
// the deck's sample), in the text (returned) and the JSON ("encoders"); with model.encoders =
// online part of every step. Other families: "".
std::string encoders_report(const RunConfig& cfg, const RunPlan& p, nlohmann::json& json) {
  if (cfg.model.family != Family::wan) return "";
  const EncoderSample sample =
      dreamzero_encoder_sample(cfg.model, cfg.plan.video_height, cfg.plan.video_width, cfg.plan.instruction_tokens);
  const EncoderCost e = dreamzero_encoder_cost(p.hw, sample);
  json["encoders"] = encoders_json(sample, e, p.as_deck);
  json["encoders"]["in_step"] = cfg.model.online_encoders;
  std::string text = encoders_text(p.hw, sample, e, p.as_deck);
  if (!cfg.model.online_encoders) return text;
  // Every rank holds the frozen weights whole and one sample's forward at a time (the step
  // encodes a micro-batch's clips one by one).
  const double state = p.memory.state(cfg.train.shard), total = state + p.memory.activation_bytes + e.weight_bytes +
                                                                   e.forward_bytes;
  json["encoders"]["memory_bytes_per_rank"] = {{"state", state},
                                               {"activations", p.memory.activation_bytes},
                                               {"encoder_weights", e.weight_bytes},
                                               {"encoder_forward", e.forward_bytes},
                                               {"total", total}};
  const double gib = double(1ull << 30);
  return text + str("  model.encoders = online: this deck's step runs them (the encoders phase): + ", e.flops() / 1e12,
                    " TFLOP per sample; memory per rank ", total / gib, " GiB = state ", state / gib,
                    " + activations ", p.memory.activation_bytes / gib, " + the encoders' weights ", e.weight_bytes / gib,
                    " + one sample's encoder forward ", e.forward_bytes / gib, "\n");
}

}  // namespace

std::string plan_report(const RunConfig& cfg, int world_size) {
  const RunPlan p = plan_run(cfg, world_size);
  const std::string& json_path = cfg.plan.json;
  std::filesystem::create_directories(std::filesystem::path(json_path).parent_path());
  nlohmann::json json = plan_json(p.hw, p.as_deck, p.ranked);
  const std::string backbone = backbone_report(cfg, p, json) + encoders_report(cfg, p, json);
  write_file_atomic(json_path, json.dump(2) + "\n");
  return plan_text(p.memory) + prediction_text(p.hw, p.as_deck, p.ranked, 10) + backbone +
         str("JSON: ", json_path, "\n");
}

}  // namespace emb
