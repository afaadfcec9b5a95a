// The resolved hyperparameters of one model (MODEL.md "Presets"): a preset's values with
// the deck's [model] overrides applied and validated. What the data layer needs of them (sample
// shapes, token counts) is the TokenConfig base (batch/token_config.hpp); the rest is the
// model's and --plan's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/token_config.hpp"

namespace emb {

enum class Precision { fp32, bf16 };
enum class Recompute { none, selective, full };
// Self-attention mask of the DiT blocks. `family` is MODEL.md's (gr00t: full on odd layers,
// wan: block_causal); the others let tests run every mask through a whole model.
enum class SelfMask { family, full, block_causal, prefix };

// A tensor of a context encoder the step trains (model.tune_visual): its name (upstream's),
// its [rows, cols] as the encoder reads it, and whether AdamW decays it.
struct TrainedContextTensor {
  std::string name;
  int64_t rows = 0, cols = 0;
  bool decay = true;
  std::string unit;  // the ZeRO-3 unit it belongs to (consecutive tensors of one name share it)
};

struct ModelConfig : TokenConfig {
  std::string preset;

  // The DiT trunk.
  int d_model = 0;   // D
  int n_layers = 0;  // L
  int n_heads = 0;   // H
  int d_ff = 0;      // F

  // gr00t (upstream ties: d_ff = 4·d_model, d_out = d_hidden_enc; validate_model_config)
  int n_layers_vl = 0;   // Lvl
  int n_heads_vl = 0;
  int d_out = 0;         // Dout
  int d_hidden_enc = 0;  // Dh (also wan's: its action decoder's hidden width, upstream's hidden_size)
  int max_seq_len = 0;   // rows of pos_emb (upstream's position_embedding, max_seq_len), ≥ horizon

  // Dropout probability of the blocks' dropout sites (MODEL.md "Dropout"), in training only:
  // the DiT blocks' and gr00t's vl blocks'. 0 = none (the wan presets).
  double dropout = 0;
  double dropout_vl = 0;

  // wan
  int out_channels = 0;  // C out (head.proj); equals C in except 14B I2V
  double shift = 5.0;
  double action_loss_weight = 1.0;
  // The clean stream's window under teacher_forcing: a clean block sees frame 0 and the last
  // max_chunk·fpb + 1 latent frames up to its end (upstream's max_chunk_size).
  int max_chunk = 1;

  Precision precision = Precision::fp32;
  Recompute recompute = Recompute::none;
  bool fp8 = false;  // model.fp8: the blocks' eligible linears on the FP8 path (dit_block.hpp, fp8_eligible)
  double init_std = 0.02;
  SelfMask self_mask = SelfMask::family;
  // gr00t, model.backbone = online: the step computes the vl features with the frozen Eagle
  // backbone of backbone_dir (train/online_backbone.hpp), under GR00T's training transforms
  // unless backbone_augment is off.
  bool online_backbone = false;
  std::string backbone_dir;
  bool backbone_augment = true;
  // train.tune_visual = on (needs online_backbone): the backbone's vision tower and mlp1 are
  // trained. Their tensors (trained_context: train/tuned_backbone.hpp fills it from backbone_dir)
  // are registered at the end of unit 0, and the step computes the context through them
  // (Model::set_context_source).
  bool tune_visual = false;
  std::vector<TrainedContextTensor> trained_context;
  // wan, model.encoders = online: the step runs DreamZero's frozen encoders (Wan VAE, umT5-XXL,
  // CLIP) of the released folder encoders_dir on each sample's frames and task text, as RLinf's
  // SFT does (train/online_encoders.hpp); --plan counts them (plan/encoder_cost.hpp).
  bool online_encoders = false;
  std::string encoders_dir;

  int head_dim() const { return d_model / n_heads; }
  // The head dims the attention layers use: the trunk's, and gr00t's VL backbone's (d_ctx / n_heads_vl).
  std::vector<int> attention_head_dims() const {
    std::vector<int> dims = {head_dim()};
    if (family == Family::gr00t && n_layers_vl > 0) dims.push_back(d_ctx / n_heads_vl);
    return dims;
  }
  int patch_dim_out() const { return out_channels * patch[0] * patch[1] * patch[2]; }
};

}  // namespace emb
