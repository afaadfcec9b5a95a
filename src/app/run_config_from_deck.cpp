#include "app/run_config_from_deck.hpp"

#include <optional>
#include <utility>

#include "checkpoint/run_identity.hpp"
#include "core/error.hpp"
#include "data/upstream_data_config.hpp"
#include "model/presets.hpp"
#include "weights/upstream_config.hpp"

namespace emb {
namespace {

// An enum key's value: the schema has already refused any text but its choices.
template <class E>
E choice(const Deck& deck, const std::string& key, std::initializer_list<std::pair<const char*, E>> names) {
  const std::string text = deck.get_string(key);
  for (const auto& [name, value] : names)
    if (text == name) return value;
  EMB_ASSERT(!"the schema allows only the choices above");
  return names.begin()->second;
}

bool on(const Deck& deck, const std::string& key) { return deck.get_string(key) == "on"; }

RunSettings run_section(const Deck& deck) {
  RunSettings r;
  r.name = deck.get_string("run.name");
  r.output_dir = deck.get_string("run.output_dir");
  r.seed = uint64_t(deck.get_int("run.seed"));
  r.log_every = deck.get_int("run.log_every");
  r.profile_ops = on(deck, "run.profile_ops");
  return r;
}

BackendConfig backend_section(const Deck& deck) {
  BackendConfig b;
  b.device = choice<Device>(deck, "run.device", {{"cpu", Device::cpu}, {"cuda", Device::cuda}});
  b.cuda_graphs = on(deck, "run.cuda_graphs");
  b.deterministic = on(deck, "run.deterministic");
  return b;
}

// The [model] sizes a released config.json gives (weights/upstream_config.hpp), by key.
int* model_size_field(ModelConfig& c, const std::string& key) {
  const std::pair<const char*, int ModelConfig::*> fields[] = {
      {"d_model", &ModelConfig::d_model},
      {"n_layers", &ModelConfig::n_layers},
      {"n_heads", &ModelConfig::n_heads},
      {"d_ff", &ModelConfig::d_ff},
      {"d_ctx", &ModelConfig::d_ctx},
      {"n_layers_vl", &ModelConfig::n_layers_vl},
      {"n_heads_vl", &ModelConfig::n_heads_vl},
      {"d_out", &ModelConfig::d_out},
      {"d_hidden_enc", &ModelConfig::d_hidden_enc},
      {"max_seq_len", &ModelConfig::max_seq_len},
      {"n_embodiments", &ModelConfig::n_embodiments},
      {"state_dim", &ModelConfig::state_dim},
      {"action_dim", &ModelConfig::action_dim},
      {"horizon", &ModelConfig::horizon},
      {"n_future", &ModelConfig::n_future},
      {"latent_channels", &ModelConfig::latent_channels},
      {"cond_channels", &ModelConfig::cond_channels},
      {"clip_tokens", &ModelConfig::clip_tokens},
      {"out_channels", &ModelConfig::out_channels},
      {"frames_per_block", &ModelConfig::frames_per_block},
      {"actions_per_block", &ModelConfig::actions_per_block},
      {"states_per_block", &ModelConfig::states_per_block},
  };
  for (const auto& [name, field] : fields)
    if (key == name) return &(c.*field);
  return nullptr;
}

// train.init_from's config.json, or nothing. Its errors are input to fix (exit code 2).
std::optional<UpstreamConfig> upstream_config(const Deck& deck) {
  const std::string init_from = deck.get_string("train.init_from");
  if (init_from.empty()) return std::nullopt;
  try {
    return read_upstream_config(config_json_of(init_from));
  } catch (const Error& e) {
    throw Error(str(where_set(deck, "train.init_from"), ": train.init_from: ", e.what()), kExitInput);
  }
}

// The family's released preset, for a deck that leaves model.preset to train.init_from: the
// DreamZero DROID layout of Wan2.1 I2V-14B (y channels beside the latents) or Wan2.2 TI2V-5B.
std::string released_preset(const UpstreamConfig& u) {
  if (u.family == UpstreamFamily::gr00t_n15) return "gr00t_n1.5_3b";
  const UpstreamDim* cond = u.find("cond_channels");
  return cond && cond->value > 0 ? "dreamzero_14b_droid" : "dreamzero_5b_droid";
}

// The checkpoint's dimensions where the deck leaves them unset; a deck value that differs is
// an error naming both, except the horizon: upstream's fine-tuning re-creates the head for the
// data's horizon (gr00t_finetune.py) and no parameter's shape depends on it.
void apply_upstream_dims(ModelConfig& c, const UpstreamConfig& u, const Deck& deck) {
  const Family family = u.family == UpstreamFamily::gr00t_n15 ? Family::gr00t : Family::wan;
  if (c.family != family)
    throw Error(str(where_set(deck, "model.preset"), ": model.preset = ", c.preset, " is a ", family_name(c.family),
                    " model, but ", u.path, " describes ", upstream_family_name(u.family),
                    " (train.init_from); leave model.preset unset to take the checkpoint's"),
                kExitInput);
  for (const UpstreamDim& d : u.dims) {
    const std::string key = "model." + d.key;
    if (d.key == "dropout" || d.key == "dropout_vl") {  // probabilities: -1 = unset; a deck value is a choice
      double& p = d.key == "dropout" ? c.dropout : c.dropout_vl;
      if (deck.get_double(key) < 0) p = d.value;
      continue;
    }
    int* field = model_size_field(c, d.key);
    if (!field) continue;  // a dimension this build's model does not have
    const bool deck_sets = deck.get_int(key) != 0;  // 0 = unset (a resolved deck lists every key)
    if (deck_sets && double(*field) != d.value && d.key != "horizon")
      throw Error(str(where_set(deck, key), ": ", key, " = ", *field, ", but ", u.path, " has ", d.source, " = ",
                      d.value, " (the checkpoint's model, train.init_from); leave ", key, " unset to take it"),
                  kExitInput);
    if (!deck_sets) *field = int(d.value);
  }
  const std::vector<int64_t> deck_patch = deck.get_int_list("model.patch");
  if (u.family == UpstreamFamily::dreamzero && (deck_patch.size() != 3 || !(deck_patch[0] || deck_patch[1] || deck_patch[2])))
    c.patch = u.patch;
}

// The preset named by model.preset (or train.init_from's family) with every non-zero [model]
// key applied, then the checkpoint's config.json where the deck is silent, validated.
ModelConfig model_section(const Deck& deck) {
  const std::optional<UpstreamConfig> upstream = upstream_config(deck);
  const std::string preset = deck.get_string("model.preset");
  ModelConfig c = preset_config(preset.empty() && upstream ? released_preset(*upstream) : preset);
  auto size = [&](const char* key, int& field) {
    int64_t v = deck.get_int(str("model.", key));
    if (v != 0) field = int(v);
  };
  size("d_model", c.d_model), size("n_layers", c.n_layers), size("n_heads", c.n_heads), size("d_ff", c.d_ff);
  size("d_ctx", c.d_ctx), size("n_layers_vl", c.n_layers_vl), size("n_heads_vl", c.n_heads_vl);
  size("d_out", c.d_out), size("d_hidden_enc", c.d_hidden_enc), size("n_embodiments", c.n_embodiments);
  size("state_dim", c.state_dim), size("action_dim", c.action_dim), size("horizon", c.horizon);
  size("n_future", c.n_future), size("latent_channels", c.latent_channels), size("out_channels", c.out_channels);
  size("frames_per_block", c.frames_per_block), size("actions_per_block", c.actions_per_block);
  size("states_per_block", c.states_per_block), size("max_chunk_size", c.max_chunk);
  size("cond_channels", c.cond_channels), size("clip_tokens", c.clip_tokens), size("d_clip", c.d_clip);
  size("latent_frames", c.latent_frames), size("latent_height", c.latent_height);
  size("latent_width", c.latent_width), size("max_text_tokens", c.max_text_tokens);
  size("max_seq_len", c.max_seq_len);
  const int64_t text_len = deck.get_int("model.text_len");  // -1: no padding, 0: the preset's
  if (text_len != 0) c.text_len = text_len < 0 ? 0 : int(text_len);
  if (c.family == Family::gr00t) {  // upstream ties them (validate_model_config): follow the overrides
    if (deck.get_int("model.d_ff") == 0) c.d_ff = 4 * c.d_model;
    if (deck.get_int("model.d_out") == 0) c.d_out = c.d_hidden_enc;
  }
  auto probability = [&](const char* key, double& field) {  // -1: the preset's
    const double v = deck.get_double(str("model.", key));
    if (v >= 0) field = v;
  };
  probability("dropout", c.dropout), probability("dropout_vl", c.dropout_vl);
  std::vector<int64_t> patch = deck.get_int_list("model.patch");
  if (patch.size() == 3 && (patch[0] || patch[1] || patch[2])) c.patch = {int(patch[0]), int(patch[1]), int(patch[2])};
  c.shift = deck.get_double("model.shift");
  c.action_loss_weight = deck.get_double("model.action_loss_weight");
  c.precision = choice<Precision>(deck, "model.precision", {{"fp32", Precision::fp32}, {"bf16", Precision::bf16}});
  c.fp8 = on(deck, "model.fp8");
  c.recompute = choice<Recompute>(deck, "model.recompute",
                       {{"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}});
  c.self_mask = choice<SelfMask>(deck, "model.self_mask",
                       {{"family", SelfMask::family}, {"full", SelfMask::full},
                        {"block_causal", SelfMask::block_causal}, {"prefix", SelfMask::prefix}});
  c.init_std = deck.get_double("model.init_std");
  c.online_backbone = choice<bool>(deck, "model.backbone", {{"offline", false}, {"online", true}});
  c.backbone_dir = deck.get_string("model.backbone_dir");
  if (c.backbone_dir.empty() && !deck.get_string("train.init_from").empty())  // the released folder it fine-tunes
    c.backbone_dir = checkpoint_folder_of(deck.get_string("train.init_from"));
  c.backbone_augment = on(deck, "model.backbone_augment");
  c.online_encoders = choice<bool>(deck, "model.encoders", {{"offline", false}, {"online", true}});
  c.encoders_dir = deck.get_string("model.encoders_dir");
  if (upstream) apply_upstream_dims(c, *upstream, deck);
  validate_model_config(c, [&](const std::vector<std::string>& keys) {
    for (const std::string& key : keys)
      if (deck.is_set("model." + key)) return where_set(deck, "model." + key);
    return where_set(deck, "model.preset");  // the preset's own values
  });
  return c;
}

// data.*; the loader's batch and seed are train.global_batch and run.seed.
DataConfig data_section(const Deck& deck, const TrainConfig& train, const RunSettings& run, Device device) {
  DataConfig c;
  c.paths = deck.get_list("data.paths");
  c.packing = on(deck, "data.packing");
  c.tokens_per_mb = deck.get_int("data.tokens_per_mb");
  c.pad_context = deck.get_int("data.pad_context");
  c.lookahead = deck.get_int("data.lookahead");
  c.prefetch = deck.is_auto("data.prefetch") ? (device == Device::cuda ? 2 : 0) : int(deck.get_int("data.prefetch"));
  c.mpio_transfer = choice<MpioTransfer>(deck, "data.mpio_transfer",
                           {{"independent", MpioTransfer::independent}, {"collective", MpioTransfer::collective}});
  c.verify = choice<DataVerify>(deck, "data.verify",
                                {{"auto", DataVerify::automatic}, {"full", DataVerify::full}, {"off", DataVerify::off}});
  c.shuffle_buffer = deck.get_int("data.shuffle_buffer");
  c.view = deck.is_set("data.view") ? deck.get_string("data.view") : "";
  c.mask_past_end = choice<bool>(deck, "data.action_past_end", {{"train", false}, {"mask", true}});
  c.dreamzero_repeat_end = choice<bool>(deck, "data.dreamzero_episode_end", {{"skip", false}, {"repeat", true}});
  c.normalize = choice<bool>(deck, "data.normalize", {{"upstream", true}, {"none", false}});
  c.relative_action_keys = deck.get_list("data.relative_action_keys");
  c.state_sin_cos = choice<bool>(deck, "data.state_encoding", {{"min_max", false}, {"sin_cos", true}});
  c.upstream_config = deck.get_string("data.upstream_config");
  c.vl_backbone = deck.get_string("data.vl_backbone");
  c.dreamzero_encoders = deck.get_string("data.dreamzero_encoders");
  c.vl_augment = on(deck, "data.vl_augment");
  c.view_tiling = deck.get_string("data.view_tiling");
  c.view_tile = deck.get_string("data.view_tile");
  c.frame_stride = deck.get_int("data.frame_stride");
  c.prompt_robot = deck.get_string("data.prompt_robot");
  c.global_batch = train.global_batch;
  c.seed = run.seed;
  return c;
}

// Upstream's tune_llm and tune_visual. The Eagle LLM stays frozen (upstream's fine-tuning
// default). The vision tower can only change features the step computes itself
// (model.backbone = online): embpack's stored features are fixed.
void check_backbone_tuning(const Deck& deck) {
  if (on(deck, "train.tune_llm"))
    throw Error(str(where_set(deck, "train.tune_llm"), ": train.tune_llm = on: embtrain keeps the Eagle LLM frozen "
                    "(upstream's fine-tuning default); set it off"),
                kExitInput);
  if (!on(deck, "train.tune_visual")) return;
  const std::string where = where_set(deck, "train.tune_visual");
  if (deck.get_string("model.backbone") != "online")
    throw Error(str(where, ": train.tune_visual = on needs model.backbone = online: offline features (embpack "
                    "features) are fixed, no gradient reaches the vision tower that made them"),
                kExitInput);
  if (on(deck, "run.cuda_graphs"))
    throw Error(str(where, ": train.tune_visual = on with run.cuda_graphs = on: the trained backbone prepares each "
                    "micro-batch's frames on the host inside the step, which a captured graph cannot repeat; set "
                    "run.cuda_graphs = off"),
                kExitInput);
}

// Relative actions are DreamZero's (its DROID recipe), subtracted from the block's anchor state and
// normalised with the relative chunks' statistics, which only a normalised run records for
// inference to add the state back.
void check_relative_actions(const Deck& deck, const ModelConfig& model, const DataConfig& data) {
  if (data.relative_action_keys.empty()) return;
  const std::string where = where_set(deck, "data.relative_action_keys");
  if (model.family != Family::wan)
    throw Error(str(where, ": data.relative_action_keys is DreamZero's (model.family = wan); GR00T-N1.5 trains "
                           "absolute actions"),
                kExitInput);
  if (!data.normalize)
    throw Error(str(where, ": data.relative_action_keys needs data.normalize = upstream (the checkpoint records the "
                           "relative keys with the statistics inference un-normalises by)"),
                kExitInput);
}

// Per-key transforms (data.state_encoding = sin_cos, data.upstream_config) are GR00T's data
// configs', applied where upstream normalises, and recorded with the statistics for inference.
void check_key_transforms(const Deck& deck, const ModelConfig& model, const DataConfig& data) {
  const auto check = [&](bool set, const char* key, const std::string& setting) {
    if (!set) return;
    const std::string where = where_set(deck, key);
    if (model.family != Family::gr00t)
      throw Error(str(where, ": ", setting, " is GR00T-N1.5's (model.family = gr00t); DreamZero normalises its "
                             "states and actions by q01/q99"),
                  kExitInput);
    if (!data.normalize)
      throw Error(str(where, ": ", setting, " needs data.normalize = upstream (it takes the place of the "
                             "normalisation, and the checkpoint records it for inference)"),
                  kExitInput);
  };
  check(data.state_sin_cos, "data.state_encoding", "data.state_encoding = sin_cos");
  check(!data.upstream_config.empty(), "data.upstream_config", "data.upstream_config = " + data.upstream_config);
  if (data.upstream_config.empty()) return;
  const std::string where = where_set(deck, "data.upstream_config");
  if (data.state_sin_cos)
    throw Error(str(where, ": data.upstream_config decides the state's encoding (fourier_gr1_arms_only and "
                           "fourier_gr1_arms_waist sin/cos-encode it); leave data.state_encoding at min_max"),
                kExitInput);
  try {
    upstream_data_config(data.upstream_config);
  } catch (const Error& e) {
    throw Error(str(where, ": ", e.what()), kExitInput);
  }
}

TrainConfig train_section(const Deck& deck, const RunSettings& run) {
  TrainConfig c;
  c.steps = deck.get_int("train.steps");
  c.global_batch = deck.get_int("train.global_batch");
  c.lr_schedule = choice<LrShape>(deck, "train.lr_schedule",
                         {{"cosine", LrShape::cosine}, {"linear", LrShape::linear}, {"constant", LrShape::constant}});
  c.lr = deck.get_double("train.lr");
  c.min_lr = deck.get_double("train.min_lr");
  c.warmup_steps = deck.get_int("train.warmup_steps");
  c.beta1 = float(deck.get_double("train.beta1"));
  c.beta2 = float(deck.get_double("train.beta2"));
  c.eps = float(deck.get_double("train.eps"));
  c.weight_decay = float(deck.get_double("train.weight_decay"));
  c.grad_clip = float(deck.get_double("train.grad_clip"));
  c.skip_nonfinite = deck.get_string("train.nan_policy") == "skip";
  c.shard = choice<ShardMode>(deck, "train.shard", {{"none", ShardMode::none}, {"grads", ShardMode::grads}, {"full", ShardMode::full}});
  c.bucket_bytes = int64_t(deck.get_double("train.bucket_mb") * (1 << 20));
  // train.ckpt_dir, or <run.output_dir>/ckpt/<run.name or deck stem>: stable across restarts,
  // so a requeued job with train.resume = auto finds the checkpoints of the one before it.
  c.ckpt_dir = deck.get_string("train.ckpt_dir");
  if (c.ckpt_dir.empty()) c.ckpt_dir = run.output_dir + "/ckpt/" + (run.name.empty() ? deck.stem() : run.name);
  c.ckpt_every = deck.get_int("train.ckpt_every");
  c.ckpt_keep = int(deck.get_int("train.ckpt_keep"));
  c.ckpt_stop_on_error = deck.get_string("train.ckpt_on_error") == "stop";
  c.resume = deck.get_string("train.resume");
  c.init_from = deck.get_string("train.init_from");
  c.tune_projector = on(deck, "train.tune_projector");
  c.tune_diffusion_model = on(deck, "train.tune_diffusion_model");
  check_backbone_tuning(deck);
  c.watchdog_s = deck.get_double("train.watchdog_s");
  c.frozen_peer_s = deck.get_double("train.frozen_peer_s");
  return c;
}

CommConfig comm_section(const Deck& deck) {
  CommConfig c;
  c.backend = choice<CommBackend>(deck, "comm.backend",
                     {{"auto", CommBackend::automatic}, {"mpi", CommBackend::mpi}, {"nccl", CommBackend::nccl}});
  c.progress = choice<CommProgress>(deck, "comm.progress", {{"thread", CommProgress::thread}, {"none", CommProgress::none}});
  c.fabric_latency_us = deck.get_double("comm.fabric_latency_us");
  c.fabric_gbps = deck.get_double("comm.fabric_gbps");
  c.overlap = on(deck, "comm.overlap");
  return c;
}

PlanConfig plan_section(const Deck& deck, const BackendConfig& backend, const RunSettings& run) {
  PlanConfig c;
  c.hardware = deck.get_string("plan.hardware");
  if (c.hardware.empty()) c.hardware = backend.device == Device::cpu ? "cpu_dev" : "h100_sxm";
  c.dataset_samples = deck.get_int("plan.dataset_samples");
  c.json = deck.get_string("plan.json");
  if (c.json.empty()) c.json = run.output_dir + "/plan/" + deck.stem() + ".json";
  c.ranks = int(deck.get_int("train.ranks"));
  c.micro_batch = deck.get_int("train.micro_batch");
  c.backbone_views = int(deck.get_int("plan.backbone_views"));
  c.instruction_tokens = deck.get_int("plan.instruction_tokens");
  c.video_height = int(deck.get_int("plan.video_height"));
  c.video_width = int(deck.get_int("plan.video_width"));
  return c;
}

SimConfig sim_section(const Deck& deck) {
  SimConfig c;
  c.flow_steps = int(deck.get_int("sim.flow_steps"));
  c.exec_steps = int(deck.get_int("sim.exec_steps"));
  c.sde_noise = deck.get_double("sim.sde_noise");
  return c;
}

DebugConfig debug_section(const Deck& deck) {
  DebugConfig c;
  c.inject_nan_step = deck.get_int("debug.inject_nan_step");
  c.fail_rank = deck.get_int("debug.fail_rank");
  c.fail_step = deck.get_int("debug.fail_step");
  c.fail_how = deck.get_string("debug.fail_how") == "kill" ? InjectedFailure::kill : InjectedFailure::error;
  c.ckpt_fail_step = deck.get_int("debug.ckpt_fail_step");
  c.slow_micro_batch_s = deck.get_double("debug.slow_step_ms") * 1e-3;
  c.slow_rank = deck.get_int("debug.slow_rank");
  c.random_params = on(deck, "debug.random_params");
  return c;
}

}  // namespace

RunConfig run_config_from_deck(const Deck& deck) {
  RunConfig c;
  c.deck_path = deck.path();
  c.deck_stem = deck.stem();
  c.deck_text = deck.resolved_text();
  c.run_id = run_identity([&](const std::string& key) { return deck.text(key); });
  c.origins = key_origins(deck);
  c.run = run_section(deck);
  c.backend = backend_section(deck);
  c.model = model_section(deck);
  c.train = train_section(deck, c.run);
  c.model.tune_visual = on(deck, "train.tune_visual");
  // Upstream puts a frozen DiT in eval mode (set_frozen_modules_to_eval_mode): no dropout there.
  if (!c.train.tune_diffusion_model && c.model.family == Family::gr00t) c.model.dropout = 0;
  c.data = data_section(deck, c.train, c.run, c.backend.device);
  check_relative_actions(deck, c.model, c.data);
  check_key_transforms(deck, c.model, c.data);
  c.comm = comm_section(deck);
  c.plan = plan_section(deck, c.backend, c.run);
  c.sim = sim_section(deck);
  c.debug = debug_section(deck);
  return c;
}

}  // namespace emb
