#include "config/schema.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "config/value.hpp"
#include "core/error.hpp"

namespace emb {

const char* key_type_name(KeyType type) {
  switch (type) {
    case KeyType::integer: return "int";
    case KeyType::real: return "double";
    case KeyType::boolean: return "bool";
    case KeyType::string: return "string";
    case KeyType::enumeration: return "enum";
    case KeyType::list: return "list";
    case KeyType::int_list: return "int_list";
  }
  EMB_ASSERT(!"every KeyType is named above");
  return "";
}

bool Range::contains(double x) const {
  bool above_lo = lo_open ? x > lo : x >= lo;
  bool below_hi = hi_open ? x < hi : x <= hi;
  return above_lo && below_hi;
}

std::string Range::text() const {
  bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi)
    return str(lo_open ? "(" : "[", format_number(lo), ", ", format_number(hi), hi_open ? ")" : "]");
  if (has_lo) return str(lo_open ? "> " : ">= ", format_number(lo));
  if (has_hi) return str(hi_open ? "< " : "<= ", format_number(hi));
  return "";
}

constexpr double kInf = std::numeric_limits<double>::infinity();
Range any_number() { return Range{-kInf, kInf}; }
Range at_least(double lo) { return Range{lo, kInf}; }
Range above(double lo) { return Range{lo, kInf, true, false}; }
Range between(double lo, double hi) { return Range{lo, hi}; }
Range from_below(double lo, double hi) { return Range{lo, hi, false, true}; }

std::string KeySpec::section() const { return key.substr(0, key.find('.')); }
std::string KeySpec::name() const { return key.substr(key.find('.') + 1); }

namespace {

KeySpec int_key(const char* key, const char* def, const char* unit, Range range, const char* doc) {
  KeySpec s;
  s.key = key, s.type = KeyType::integer, s.default_value = def, s.unit = unit, s.range = range;
  s.doc = doc;
  return s;
}

// An integer key that also takes "auto": the number the run's device suits (Deck::is_auto).
KeySpec int_or_auto_key(const char* key, const char* def, const char* unit, Range range, const char* doc) {
  KeySpec s = int_key(key, def, unit, range, doc);
  s.or_auto = true;
  return s;
}

KeySpec real_key(const char* key, const char* def, const char* unit, Range range,
                 const char* doc) {
  KeySpec s = int_key(key, def, unit, range, doc);
  s.type = KeyType::real;
  return s;
}

KeySpec string_key(const char* key, const char* def, const char* doc) {
  KeySpec s;
  s.key = key, s.type = KeyType::string, s.default_value = def, s.doc = doc;
  return s;
}

KeySpec list_key(const char* key, const char* def, const char* doc) {
  KeySpec s = string_key(key, def, doc);
  s.type = KeyType::list;
  return s;
}

KeySpec int_list_key(const char* key, const char* def, std::size_t size, Range range,
                     const char* doc) {
  KeySpec s = int_key(key, def, "", range, doc);
  s.type = KeyType::int_list, s.list_size = size;
  return s;
}

KeySpec enum_key(const char* key, const char* def, std::vector<std::string> choices,
                 const char* doc) {
  KeySpec s = string_key(key, def, doc);
  s.type = KeyType::enumeration, s.choices = std::move(choices);
  return s;
}

KeySpec required(KeySpec s) {
  s.required = true, s.default_value.clear();
  return s;
}

KeySpec required_unless(const char* other, KeySpec s) {
  s = required(std::move(s));
  s.unless = other;
  return s;
}

// A [model] size that is 0 unless the deck overrides the preset. Sizes are 32-bit in the
// model, so the range refuses what would not fit before any narrowing.
KeySpec model_size(const char* name, const char* doc) {
  return int_key(name, "0", "", between(0, 2147483647), doc);
}

std::vector<KeySpec> make_schema() {
  return {
      // [run]
      string_key("run.name", "", "run name; empty = <deck stem>-<timestamp>"),
      string_key("run.output_dir", "outputs", "directory that holds one folder per run"),
      int_key("run.seed", "1234", "", at_least(0), "seed of every random stream"),
      int_key("run.log_every", "10", "steps", at_least(1), "log a train.log line every N steps"),
      enum_key("run.profile_ops", "off", {"on", "off"},
               "on = time every op by the part of the step it runs in, from the second step: "
               "<run dir>/op_profile/rank<R>.csv and a train.log line of ms per step by kind (gemm, "
               "attention, dropout, elementwise, outside ops), the kinds --plan's JSON predicts "
               "(compute_by_kind). Two clock reads per op on the CPU; on a GPU the stream is "
               "synchronised around every op and CUDA graphs are off, so the steps are slower"),
      enum_key("run.device", "cpu", {"cpu", "cuda"}, "where the model runs"),
      enum_key("run.cuda_graphs", "off", {"on", "off"},
               "run.device = cuda: run each micro-batch as CUDA graphs, one per span between the units' "
               "communication, kept per token-count bucket and replayed; off by default until it has run on "
               "a GPU (README, On GPUs)"),
      enum_key("run.deterministic", "off", {"on", "off"},
               "run.device = cuda: on = the attention backward on Hopper (sm_90) forms dQ without atomics, so "
               "that a run repeats bit for bit (two kernels, 7 tile products per pair instead of 5: slower); "
               "off = dQ summed by fp32 atomics, as FlashAttention and cuDNN do. Other GPUs and the CPU are "
               "deterministic either way"),

      // [model]: sizes default to 0 = the preset's value
      required_unless("train.init_from",
                      enum_key("model.preset", "",
                               {"tiny_gr00t", "tiny_wan", "tiny_dreamzero", "gr00t_n1.5_3b", "dreamzero_14b_droid",
                                "dreamzero_5b_droid", "dreamzero5b", "dreamzero14b"},
                               "model family and sizes (MODEL.md Presets); unset with train.init_from: the "
                               "family's released preset, sized by the checkpoint's config.json")),
      model_size("model.d_model", "trunk width D; 0 = preset"),
      model_size("model.n_layers", "DiT blocks L; 0 = preset"),
      model_size("model.n_heads", "attention heads H; 0 = preset"),
      model_size("model.d_ff", "feed-forward width F; 0 = preset (gr00t: 4·d_model, upstream's tie)"),
      model_size("model.d_ctx", "context feature width (Dvl or Dtxt); 0 = preset"),
      model_size("model.n_layers_vl", "gr00t vision-language blocks Lvl; 0 = preset"),
      model_size("model.n_heads_vl", "gr00t vision-language heads; 0 = preset"),
      model_size("model.d_out", "gr00t output projection width Dout; 0 = d_hidden_enc (upstream ties them)"),
      model_size("model.d_hidden_enc", "state/action encoder hidden width Dh (wan: the action decoder's); 0 = preset"),
      model_size("model.n_embodiments", "gr00t embodiment slots E; 0 = preset"),
      model_size("model.state_dim", "state width Sd (gr00t; wan: max_state_dim); 0 = preset"),
      model_size("model.action_dim", "action width A; 0 = preset"),
      model_size("model.horizon", "gr00t action horizon Hz; 0 = preset"),
      model_size("model.n_future", "gr00t future tokens Nf; 0 = preset"),
      model_size("model.max_seq_len", "gr00t rows of pos_emb (upstream's position_embedding), >= horizon; 0 = preset"),
      model_size("model.latent_channels", "wan latent input channels C; 0 = preset"),
      model_size("model.out_channels", "wan head output channels; 0 = preset"),
      model_size("model.frames_per_block", "wan latent frames per block fpb; 0 = preset"),
      model_size("model.actions_per_block", "wan actions per block Ha; 0 = preset"),
      model_size("model.states_per_block", "wan state tokens per block Ns (DreamZero layout only); 0 = preset"),
      model_size("model.max_chunk_size", "wan clean-stream window of the teacher-forcing mask in blocks (upstream's "
                 "max_chunk_size: a clean block sees frame 0 and the last max_chunk_size·fpb + 1 frames); 0 = preset"),
      model_size("model.cond_channels", "wan I2V y channels per latent pixel (4 mask + the first frame's latents), "
                 "never noised, beside the latents in the patch embedding (DreamZero layout); 0 = preset"),
      model_size("model.clip_tokens", "wan CLIP image-context rows per sample (upstream 257; DreamZero layout); "
                 "0 = preset"),
      model_size("model.d_clip", "wan CLIP feature width (upstream 1280); 0 = preset"),
      model_size("model.latent_frames", "wan latent frames F per sample; 0 = preset"),
      model_size("model.latent_height", "wan latent height Hl; 0 = preset"),
      model_size("model.latent_width", "wan latent width Wl; 0 = preset"),
      model_size("model.max_text_tokens", "wan text tokens per sample at most; 0 = preset"),
      int_key("model.text_len", "0", "", at_least(-1),
              "wan rows every sample's text is padded to with zero rows, attended as upstream does (its text_len, "
              "512 in the DreamZero presets); -1 = no padding (models trained from scratch); 0 = preset"),
      int_list_key("model.patch", "0, 0, 0", 3, at_least(0),
                   "wan patch (pt, ph, pw); 0, 0, 0 = preset"),
      real_key("model.shift", "5", "", above(0), "wan noise schedule shift"),
      real_key("model.action_loss_weight", "1", "", at_least(0),
               "wan weight of the action loss"),
      real_key("model.dropout", "-1", "", from_below(-1, 1),
               "gr00t dropout probability of the DiT blocks' four dropout sites (attention output twice, after "
               "the GELU, after the FFN), in training only, as upstream trains; -1 = preset (gr00t 0.2, wan none)"),
      real_key("model.dropout_vl", "-1", "", from_below(-1, 1),
               "gr00t dropout probability of the vl blocks' dropout sites (as model.dropout); -1 = preset (0.2)"),
      enum_key("model.precision", "fp32", {"fp32", "bf16"},
               "compute precision: bf16 keeps fp32 master weights and AdamW moments and computes on bf16 "
               "copies of the weights (rounded once per update, gathered in bf16); on cuda the transformer "
               "blocks run on bf16 activations and GEMMs (fp32 accumulation, fp32 residual stream, norm "
               "statistics and parameter gradients; encoders and heads in fp32, and all of it in fp32 with "
               "model.fp8 = on); on cpu everything computes in fp32 on the rounded weights"),
      enum_key("model.fp8", "off", {"off", "on"},
               "FP8 (E4M3) GEMMs with block scales (1x128 activation tiles, 128x128 weight blocks) for the "
               "blocks' q, k, v, o, fc1 and fc2 whose in and out are multiples of 128: forward and input "
               "gradient in FP8, weight gradient unquantised; refused at start-up when no linear is eligible; "
               "on cuda needs compute capability 9.0+ (the cpu backend runs the reference recipe)"),
      enum_key("model.self_mask", "family", {"family", "full", "block_causal", "prefix"},
               "DiT self-attention mask: family = MODEL.md's (gr00t full, wan block_causal); full on wan "
               "computes every pair of a sample, the dense-mask cost baseline of make bench"),
      enum_key("model.recompute", "none", {"none", "selective", "full"},
               "activation recompute per block (selective: the attention cores; full: the whole block)"),
      real_key("model.init_std", "0.02", "", above(0), "std of the initial weights"),
      enum_key("model.backbone", "offline", {"offline", "online"},
               "gr00t: where the vl features come from: offline = the packed files' /features/vl (embpack "
               "features); online = the step runs the frozen Eagle 2.5 backbone of model.backbone_dir on each "
               "sample's frames (/video, the file's views in order) and task prompt, no gradients, timed as the "
               "backbone phase"),
      enum_key("model.encoders", "offline", {"offline", "online"},
               "wan: where the latents and the text and image context come from: offline = the packed files "
               "(embpack); online = the step runs DreamZero's frozen Wan VAE encoder, umT5-XXL and CLIP on each "
               "sample's frames (/video, tiled as data.view_tiling says) and task text, forward only, timed as the "
               "encoders phase, as RLinf's DreamZero SFT does (--plan counts their cost in the step)"),
      string_key("model.encoders_dir", "",
                 "wan, model.encoders = online: the folder of DreamZero's released encoders (Wan's layout: "
                 "Wan2.1_VAE.pth, models_t5_umt5-xxl-enc-bf16.pth, the CLIP .pth, or their .safetensors, and "
                 "umT5's spiece.model), as embpack features --dreamzero reads it"),
      string_key("model.backbone_dir", "",
                 "gr00t, model.backbone = online: the GR00T-N1.5 checkpoint folder (backbone.eagle_model.* tensors, "
                 "config.json) with its Eagle folder eagle2_hg_model/ (config.json and the Qwen tokenizer files); empty: "
                 "train.init_from's folder"),
      enum_key("model.backbone_augment", "on", {"on", "off"},
               "gr00t, model.backbone = online: GR00T's training transforms on the frames (random crop 0.95, "
               "colour jitter; drawn from run.seed, the sample and the step, so a resumed run draws the same); "
               "off = the evaluation transforms (centre crop 0.95)"),

      // [data]
      list_key("data.paths", "", "packed HDF5 files or globs, comma-separated"),
      enum_key("data.packing", "on", {"on", "off"},
               "pack samples into micro-batches by tokens (off: every sample padded to the longest, or to "
               "data.pad_context, as many as fit in tokens_per_mb)"),
      int_key("data.tokens_per_mb", "4096", "tokens", between(16, 1e9),
              "token budget of one packed micro-batch"),
      int_key("data.pad_context", "0", "tokens", at_least(0),
              "packing = off: context tokens every sample is padded to (masked), e.g. vision tokens + 200 "
              "text tokens as JDT pads; 0 = the longest context in the data"),
      int_key("data.lookahead", "64", "samples", at_least(1),
              "samples the packer considers when filling a micro-batch"),
      int_or_auto_key("data.prefetch", "auto", "steps", between(0, 64),
                      "optimizer steps of micro-batches a thread loads ahead of the step (0: load on demand in the "
                      "step); auto = 2 on cuda, whose nodes have spare cores for the thread, 0 on cpu, where the "
                      "thread shares the rank's core and hides no work (it cost 4-6 % a step at 2 ranks, 5-33 % at 4 "
                      "ranks sharing 2 cores: regression/plan_validation.md, session 16)"),
      enum_key("data.mpio_transfer", "independent", {"independent", "collective"},
               "MPI-IO reads: each rank its own share, or collective calls MPI-IO may aggregate"),
      enum_key("data.verify", "auto", {"auto", "full", "off"},
               "check every value of the data files (non-finite state, action, feature or latent rows) before step "
               "1, split over the ranks: full = always, auto = unless the file records a verify of its current "
               "content (a full verify or embpack verify records one), off = only as steps read them"),
      int_key("data.shuffle_buffer", "65536", "samples", at_least(1), "shuffle window"),
      string_key("data.view", "agentview", "camera view to read"),
      enum_key("data.action_past_end", "train", {"train", "mask"},
               "gr00t action-chunk steps past the episode's end, which repeat its last action: train = trained "
               "on like any other (upstream GR00T-N1.5's data path; only unused action columns are masked); "
               "mask = masked out of the loss (action_mask 0), so a chunk never learns actions that were not "
               "taken"),
      enum_key("data.dreamzero_episode_end", "skip", {"skip", "repeat"},
               "wan, DreamZero layout: a step whose clip, actions or states would pass its episode's end: skip = "
               "no sample (upstream's DROID loader and RLinf never train on such a window); repeat = a sample "
               "with the episode's last frame and step repeated (every step a sample)"),
      enum_key("data.normalize", "upstream", {"upstream", "none"},
               "states and actions as the model sees them: upstream = normalised per dimension with the data "
               "files' /stats as upstream inference does (gr00t: min/max to [-1, 1]; wan: q01/q99 to [-1, 1], "
               "clamped), the statistics recorded in checkpoints and written into the export's metadata.json; "
               "none = the raw /steps/state and /steps/action"),
      list_key("data.relative_action_keys", "",
               "wan, DreamZero layout: the action sub-keys trained relative to the state (upstream's DROID recipe: "
               "joint_position): action.K minus state.K at its block's anchor step (sub-keys and columns from the "
               "packed file's modality attribute, embpack lerobot), q01/q99-normalised with the relative chunks' "
               "/stats/action_relative (embpack --relative-actions); needs data.normalize = upstream. Empty: "
               "absolute actions"),
      enum_key("data.state_encoding", "min_max", {"min_max", "sin_cos"},
               "gr00t, data.normalize = upstream: min_max = every state dimension min/max-normalised (upstream's "
               "StateActionTransform); sin_cos = each state sub-key K given as [sin(K), cos(K)] instead, the "
               "sub-keys in the packed file's column order (embpack lerobot --state-keys chooses them and their "
               "order), as upstream data configs such as fourier_gr1_arms_only do (StateActionSinCosTransform): "
               "the model's state_dim must hold twice the state"),
      string_key("data.upstream_config", "",
                 "gr00t, data.normalize = upstream: the GR00T-N1.5 data config (Isaac-GR00T's DATA_CONFIG_MAP: "
                 "fourier_gr1_arms_waist, fourier_gr1_arms_only, fourier_gr1_full_upper_body, "
                 "bimanual_panda_gripper, bimanual_panda_hand, single_panda_gripper, so100, so100_dualcam, "
                 "unitree_g1, unitree_g1_full_body, oxe_droid, agibot_genie1) whose per-key transforms the model is "
                 "given, in its key order: each state/action sub-key (the packed file's modality attribute) "
                 "rotated to its target representation (the file's rotation_type to e.g. rotation_6d), "
                 "normalised by its mode (min_max, q99, mean_std, binary, or not at all) or sin/cos-encoded, as "
                 "upstream's StateActionTransform does; the checkpoint records it, embsim's policy and the export "
                 "follow it; deploy with the same config. model.state_dim/action_dim must hold the transformed "
                 "widths. Empty: every column by data.normalize (and data.state_encoding)"),
      string_key("data.vl_backbone", "",
                 "gr00t: the GR00T-N1.5 checkpoint folder whose Eagle backbone must have made every file's vl "
                 "features (embpack features --backbone records its digest); files of another backbone or of the "
                 "stand-in encoder are refused. Empty: not checked"),
      string_key("data.dreamzero_encoders", "",
                 "wan, DreamZero layout: the folder of DreamZero's VAE, umT5 and CLIP that must have made every "
                 "file's latents, text and CLIP features (embpack features --dreamzero records their digest); files "
                 "of other encoders are refused. Empty: not checked"),
      string_key("data.view_tiling", "2x2",
                 "wan, model.encoders = online: the grid RxC a step's camera views are tiled into (row-major, the "
                 "file's /video views in order), as embpack features --dreamzero --tiling"),
      string_key("data.view_tile", "176x320",
                 "wan, model.encoders = online: each tile's HxW (RLinf's DROID 2x2 of 176x320), as --tile"),
      int_key("data.frame_stride", "3", "steps", at_least(1),
              "wan, model.encoders = online: steps between a clip's raw frames (upstream's DROID: 3), as --frame-stride"),
      string_key("data.prompt_robot", "oxe_droid",
                 "wan, model.encoders = online: DreamZero's prompt template (its embodiment tag), as --robot"),
      enum_key("data.vl_augment", "off", {"off", "on"},
               "gr00t: train on the augmented vl features embpack features --augment K stored (GR00T's random "
               "crop and colour jitter), variant epoch mod K; off: the eval features"),

      // [train]
      int_key("train.steps", "100", "steps", at_least(0), "optimizer steps to run"),
      int_key("train.global_batch", "8", "samples", at_least(1), "samples per optimizer step"),
      int_key("train.micro_batch", "0", "samples", at_least(0),
              "samples per micro-batch of --plan with packing = off; 0 = as many as fit in data.tokens_per_mb"),
      real_key("train.lr", "0.0003", "", at_least(0), "peak learning rate"),
      real_key("train.min_lr", "3e-05", "", at_least(0), "learning rate at the end of decay"),
      int_key("train.warmup_steps", "10", "steps", at_least(0), "linear warmup length"),
      enum_key("train.lr_schedule", "cosine", {"cosine", "constant", "linear"},
               "decay after warmup"),
      real_key("train.weight_decay", "0.01", "", at_least(0), "AdamW decoupled weight decay"),
      real_key("train.beta1", "0.9", "", from_below(0, 1), "AdamW first moment decay"),
      real_key("train.beta2", "0.95", "", from_below(0, 1), "AdamW second moment decay"),
      real_key("train.eps", "1e-08", "", above(0), "AdamW epsilon"),
      real_key("train.grad_clip", "1", "", at_least(0), "global gradient norm clip; 0 = off"),
      enum_key("train.shard", "full", {"none", "grads", "full"},
               "parameter sharding: none, grads (ZeRO-2), full (ZeRO-3)"),
      real_key("train.bucket_mb", "25", "MiB", above(0), "gradient communication bucket size"),
      int_key("train.ranks", "0", "", at_least(0), "rank count; 0 = world size (used by --plan)"),
      enum_key("train.nan_policy", "stop", {"stop", "skip"},
               "on a non-finite loss: stop the run or skip the step"),
      string_key("train.resume", "off", "off, auto (latest in ckpt_dir) or a checkpoint path"),
      string_key("train.init_from", "",
                 "released weights to start from: GR00T-N1.5's or DreamZero's checkpoint folder (safetensors "
                 "+ config.json) or one .safetensors file with config.json beside it; [model] sizes the deck "
                 "leaves unset come from its config.json (README, Fine-tuning released weights). A resumed "
                 "checkpoint takes precedence"),
      enum_key("train.tune_projector", "on", {"on", "off"},
               "upstream's tune_projector: off freezes GR00T's state and action encoders, action decoder and "
               "position table (no gradient, optimizer state or gradient communication); no effect on DreamZero"),
      enum_key("train.tune_diffusion_model", "on", {"on", "off"},
               "upstream's tune_diffusion_model: off freezes the DiT (GR00T: time encoder, blocks, output "
               "projections, which then run without dropout; DreamZero: the whole CausalWanModel)"),
      enum_key("train.tune_llm", "off", {"on", "off"},
               "upstream's tune_llm: refused; the Eagle LLM stays frozen in embtrain (upstream's fine-tuning "
               "default), so it must stay off"),
      enum_key("train.tune_visual", "off", {"on", "off"},
               "upstream's tune_visual: the Eagle vision tower and mlp1 projector are trained (AdamW, ZeRO-3 with "
               "the head), the gradient reaching them through the frozen Qwen3 layers; needs model.backbone = "
               "online (offline features are fixed); their initial values come from model.backbone_dir"),
      int_key("train.ckpt_every", "0", "steps", at_least(0),
              "checkpoint interval (and at the last step); 0 = only on SIGTERM/SIGUSR1"),
      string_key("train.ckpt_dir", "",
                 "checkpoint directory; empty = <run.output_dir>/ckpt/<run.name or deck name>"),
      int_key("train.ckpt_keep", "0", "", at_least(0), "checkpoints of this run kept in ckpt_dir; 0 = all"),
      enum_key("train.ckpt_on_error", "stop", {"stop", "continue"},
               "when ckpt_dir lacks the space for a checkpoint: stop the run, or warn and train on"),
      real_key("train.watchdog_s", "0", "s", any_number(),
               "deadline of every blocking wait (collective, data read, checkpoint); 0 = automatic "
               "(max of 300 s and 10 x the longest step), < 0 = off"),
      real_key("train.frozen_peer_s", "0", "s", any_number(),
               "a rank of the node whose heartbeat has stopped this long ends the run before the watchdog "
               "deadline; 0 = automatic (max of 30 s and 5 x the median step), < 0 = off"),

      // [comm]
      enum_key("comm.backend", "auto", {"auto", "mpi", "nccl"},
               "collectives: auto = nccl on cuda, mpi on cpu"),
      enum_key("comm.progress", "thread", {"thread", "none"},
               "MPI progress thread for asynchronous collectives"),
      real_key("comm.fabric_latency_us", "0", "us", at_least(0),
               "modelled per-message fabric latency"),
      real_key("comm.fabric_gbps", "0", "GB/s", at_least(0),
               "modelled fabric bandwidth; 0 = no fabric model"),
      enum_key("comm.overlap", "on", {"on", "off"},
               "issue collectives ahead and wait where the data is needed; off = wait right after "
               "issuing (the no-overlap baseline)"),

      // [plan] what --plan predicts for
      string_key("plan.hardware", "",
                 "hardware file: a name in inputs/hw or a path; empty = cpu_dev on cpu, h100_sxm on cuda"),
      int_key("plan.dataset_samples", "0", "samples", at_least(0),
              "samples in an epoch; 0 = count data.paths when they exist"),
      string_key("plan.json", "", "the plan's JSON; empty = <run.output_dir>/plan/<deck stem>.json"),
      int_key("plan.backbone_views", "1", "views", between(1, 16),
              "gr00t: camera views per sample the backbone's cost is given for (the released Eagle 2.5)"),
      int_key("plan.instruction_tokens", "12", "tokens", at_least(0),
              "instruction tokens per sample the frozen encoders' cost is given for (gr00t: the Eagle backbone's "
              "prompt; wan: umT5's text, plus its </s>)"),
      int_key("plan.video_height", "0", "pixels", at_least(0),
              "wan: the height of the clip the VAE encodes per sample (the encoders' cost); 0 = latent_height "
              "times the VAE's factor (8, or 16 for the 48-channel VAE38)"),
      int_key("plan.video_width", "0", "pixels", at_least(0), "wan: the width, as plan.video_height"),

      // [sim] closed-loop evaluation of a gr00t checkpoint (embsim eval, CLOSED_LOOP.md)
      int_key("sim.flow_steps", "4", "", at_least(1),
              "K: Euler steps integrating the learned flow from noise to an action chunk (GR00T: 4)"),
      int_key("sim.exec_steps", "4", "steps", at_least(1),
              "n: actions of each sampled chunk executed before the policy is asked again (<= horizon)"),
      real_key("sim.sde_noise", "0", "", at_least(0),
               "0 = integrate the flow as an ODE; a > 0 = sample as RL's rollouts do: one Flow-SDE step of "
               "noise level a at a random denoising step per chunk (evaluates the policy RL trains)"),

      // [rl] reinforcement learning of a gr00t policy in the closed loop (embsim rl, CLOSED_LOOP.md
      // "RL for a flow-matching action head", "Asynchrony")
      enum_key("rl.mode", "async", {"sync", "async_rollout", "async"},
               "sync = lockstep simulate -> infer -> train; async_rollout = per-environment slots and "
               "dynamic batching, training between rollouts; async = also streaming training"),
      string_key("rl.init", "", "the SFT checkpoint (file, checkpoint dir or run dir: its last) the policy starts from"),
      string_key("rl.task", "push", "the task trained on (embsim tasks)"),
      int_key("rl.simulators", "1", "ranks", at_least(1), "ranks stepping environments"),
      int_key("rl.generators", "1", "ranks", at_least(1), "ranks running batched policy inference"),
      int_key("rl.trainers", "0", "ranks", at_least(0), "data-parallel trainer ranks; 0 = the remaining ranks"),
      int_key("rl.envs_per_simulator", "8", "", at_least(1), "environments each simulator steps"),
      int_key("rl.max_batch", "32", "samples", at_least(1), "generator: largest inference batch"),
      real_key("rl.batch_timeout_ms", "1", "ms", at_least(0),
               "generator: how long the first waiting request may wait for more before a batch runs"),
      int_key("rl.channel_capacity", "16", "messages", at_least(1), "messages in flight on one channel"),
      int_key("rl.segment_chunks", "8", "chunks", at_least(1),
              "a simulator sends an environment's transitions to a trainer every N chunks or at the episode's end"),
      int_key("rl.update_chunks", "256", "chunks", at_least(1), "transitions (action chunks) per PPO update"),
      int_key("rl.micro_chunks", "64", "chunks", at_least(1), "transitions per streamed micro-batch of an update"),
      int_key("rl.updates", "40", "", at_least(1), "PPO updates in the run"),
      int_key("rl.critic_warmup", "5", "updates", at_least(0),
              "the first N updates train the value head only (the policy waits for a critic that knows the task)"),
      int_key("rl.ppo_epochs", "1", "", at_least(1), "passes over each update's micro-batches (PPO epochs)"),
      int_key("rl.value_steps", "1", "", at_least(1),
              "value-head AdamW steps on each micro-batch: a critic that lags its returns turns advantages "
              "into the states' return differences"),
      real_key("rl.lr", "3e-05", "", at_least(0), "policy learning rate (AdamW)"),
      real_key("rl.value_lr", "0.001", "", at_least(0), "value head learning rate (AdamW)"),
      real_key("rl.gamma", "0.99", "", between(0, 1), "discount per action chunk"),
      real_key("rl.gae_lambda", "0.95", "", between(0, 1), "GAE lambda"),
      real_key("rl.clip", "0.2", "", at_least(0), "PPO ratio clip epsilon"),
      real_key("rl.dual_clip", "3", "", at_least(1), "dual clip c: a negative advantage's loss is bounded by c * |A|"),
      real_key("rl.behav_weight_max", "2", "", at_least(1),
               "decoupled PPO: samples whose pi_prox / pi_behav exceeds this are filtered out"),
      int_key("rl.max_staleness", "4", "versions", at_least(0), "samples from a policy older than this are dropped"),
      real_key("rl.noise_level", "0.5", "", at_least(0), "Flow-SDE noise level a: sigma_t = a * sqrt((1 - t) / t)"),
      enum_key("rl.sde_steps", "one", {"one", "all"},
               "stochastic denoising steps of a chunk: one = one drawn per chunk (piRL / RLinf), all = every "
               "step (DPPO / ReinFlow: log pi covers all the chain's noise but x0's; K times the trainer's work)"),
      enum_key("rl.reward", "shaped", {"sparse", "shaped", "action_probe"},
               "sparse = 1 on success; shaped = also the progress of the task's distances (Meta-World style); "
               "action_probe = the mean first action coordinate of the chunk's executed steps, nothing else (a "
               "check that the RL machinery learns, apart from the task's credit assignment)"),
      enum_key("rl.advantage", "gae", {"gae", "grpo"},
               "gae = GAE with the value head; grpo = rl.group_size environments reset to the same initial state, "
               "each episode's advantage its return against the group's mean, over the group's std (no critic; "
               "rl.mode = async)"),
      int_key("rl.group_size", "8", "episodes", at_least(2),
              "grpo: episodes per group (environments of a simulator that share each reset; divides "
              "rl.envs_per_simulator)"),
      int_key("rl.eval_every", "10", "updates", at_least(0), "evaluate success every N updates; 0 = at the end only"),
      int_key("rl.eval_episodes", "24", "episodes", at_least(1), "evaluation episodes (eval split) per evaluation"),
      int_key("rl.ckpt_every", "0", "updates", at_least(0), "checkpoint every N updates; 0 = at the end only"),
      string_key("rl.ckpt_dir", "", "checkpoint directory; empty = <run dir>/ckpt"),
      enum_key("rl.cost_model", "off", {"off", "on"},
               "on = every stage takes its modelled time (GPU-like rates, measured MuJoCo step times), "
               "real compute included"),
      real_key("rl.sim_step_ms", "7", "ms", at_least(0), "modelled median time of one control step of one environment, rendering included (src/rl/README.md)"),
      real_key("rl.sim_step_sigma", "0.3", "", at_least(0), "log-normal spread of a control step's time"),
      real_key("rl.straggler_prob", "0.01", "", between(0, 1), "chance that an environment's chunk straggles"),
      real_key("rl.straggler_factor", "10", "", at_least(1), "a straggling chunk takes this many times as long"),
      real_key("rl.gen_ms_fixed", "4", "ms", at_least(0), "modelled generator time per batch (launch, K steps)"),
      real_key("rl.gen_ms_per_sample", "0.17", "ms", at_least(0), "modelled generator time per sample of a batch"),
      real_key("rl.train_ms_per_chunk", "0.5", "ms", at_least(0), "modelled trainer time per transition (fwd + bwd)"),
      real_key("rl.cost_time_scale", "1", "", at_least(1),
               "modelled times run this many times slower, so real compute on few cores stays hidden; "
               "summary.json multiplies rates back (modelled_env_steps_per_s)"),

      // [debug] fault injection for the failure-handling tests
      int_key("debug.inject_nan_step", "0", "steps", at_least(0),
              "poison this step's gradients with NaN; 0 = never"),
      int_key("debug.fail_rank", "-1", "", at_least(-1), "this rank fails at debug.fail_step; -1 = none"),
      int_key("debug.fail_step", "1", "steps", at_least(1), "the step at which debug.fail_rank fails"),
      enum_key("debug.fail_how", "error", {"error", "kill"},
               "how debug.fail_rank fails: error (a one-line error) or kill (SIGKILL to itself, as kill -9 or the "
               "OOM killer would: the other ranks must notice)"),
      int_key("debug.ckpt_fail_step", "0", "steps", at_least(0),
              "the checkpoint of this step fails its write halfway, on the last rank, as a disk that fills after "
              "the space check; 0 = never"),
      real_key("debug.slow_step_ms", "0", "ms", at_least(0),
               "sleep this long in the forward of every micro-batch (a deliberate slowdown for regression/compare)"),
      int_key("debug.slow_rank", "-1", "", at_least(-1),
              "the rank debug.slow_step_ms slows (a straggler the others wait for); -1 = every rank"),
      enum_key("debug.random_params", "off", {"on", "off"},
               "--dump: draw every parameter at random at a trained network's scales (weights N(0, 1/fan_in), "
               "biases, norm weights 1 + noise, embeddings) instead of the initialisation, so a parity check "
               "exercises every term"),
  };
}

// Small typos only: two edits, or a third of the name for long names.
bool close_enough(std::size_t distance, const std::string& typed) {
  return distance <= std::max<std::size_t>(2, typed.size() / 3);
}

}  // namespace

const std::vector<KeySpec>& deck_schema() {
  static const std::vector<KeySpec> schema = make_schema();
  return schema;
}

std::vector<std::string> deck_sections() {
  std::vector<std::string> sections;
  for (const KeySpec& spec : deck_schema())
    if (sections.empty() || sections.back() != spec.section()) sections.push_back(spec.section());
  return sections;
}

const KeySpec* find_key_spec(const std::string& key) {
  for (const KeySpec& spec : deck_schema())
    if (spec.key == key) return &spec;
  return nullptr;
}

bool is_deck_section(const std::string& section) {
  std::vector<std::string> sections = deck_sections();
  return std::find(sections.begin(), sections.end(), section) != sections.end();
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string closest_key(const std::string& key) {
  std::size_t dot = key.find('.');
  std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
  std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
  const KeySpec* best = nullptr;
  std::size_t best_distance = 0;
  for (const KeySpec& spec : deck_schema()) {
    // A right name in the wrong section costs one edit; otherwise compare full keys so a
    // misspelt section is forgiven as readily as a misspelt name.
    std::size_t by_name = edit_distance(name, spec.name()) + (section == spec.section() ? 0 : 1);
    std::size_t distance = std::min(by_name, edit_distance(key, spec.key));
    if (!best || distance < best_distance) best = &spec, best_distance = distance;
  }
  return best && close_enough(best_distance, name) ? best->key : "";
}

std::string closest_section(const std::string& section) {
  std::string best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : deck_sections()) {
    std::size_t distance = edit_distance(section, candidate);
    if (best.empty() || distance < best_distance) best = candidate, best_distance = distance;
  }
  return close_enough(best_distance, section) ? best : "";
}

}  // namespace emb
