// The planner's cost of GR00T-N1.5's frozen Eagle 2.5 backbone (src/encoders/eagle) per sample,
// beside the action head's: embtrain trains the head on features computed offline (embpack
// features, once per dataset step) or online in the step (model.backbone = online), while
// upstream's fine-tuning runs the backbone forward in every step. Published end-to-end figures
// therefore compare with head + backbone per sample, not with the head alone.
//
// FLOPs per sample (2 × multiply-adds, spec_eagle.md §9): per view the SigLIP patch GEMM, 27
// layers of q/k/v/out and MLP GEMMs and bidirectional attention over 256 tokens, mlp1; per
// prompt token the 12 Qwen3 layers' q/k/v/o and SwiGLU GEMMs, and causal attention over the
// tokens before it. Timed at the hardware's bf16 GEMM and attention rates (upstream deploys the
// backbone in bf16), forward only (frozen: no activations kept, no gradients).
#pragma once
#include <cstdint>

#include "config/model_config.hpp"
#include "encoders/eagle/eagle_dims.hpp"
#include "plan/hardware.hpp"

namespace emb {

struct BackboneCost {
  int views = 0;
  int64_t prompt_tokens = 0;
  double vision_flops = 0;     // all views, SigLIP + mlp1
  double llm_flops = 0;        // the Qwen3 prefix
  double attention_flops = 0;  // of the two above, the attention products
  double forward_s = 0;        // per sample on the hardware, bf16
  double weight_bytes = 0;     // the backbone's bf16 weights (the embedding table included)
  // What one sample of a micro-batch adds to the backbone's bf16 forward buffers
  // (backbone_forward_bytes; nothing is kept past the forward).
  double forward_bytes = 0;
  double flops() const { return vision_flops + llm_flops; }
  // train.tune_visual (fp32, src/train/tuned_backbone.hpp), per sample: the vision tower's and
  // mlp1's forward and backward (GEMMs 3× the forward's, attention 1 + 2.5×) and the Qwen3
  // layers' forward and input-gradient backward (no weight gradients: GEMMs 2×, attention
  // 1 + 2.5×); the activations both keep for the backward, fp32. Their parameters' values,
  // gradients and AdamW moments are the run's (the model's registry holds them: --plan's state).
  double tuned_flops = 0;
  double tuned_activation_bytes = 0;
};

// The prompt of `views` views and an instruction of `instruction_tokens` tokens: the Eagle chat
// template's 19 tokens, per view "<image N><img>", 256 image tokens and "</img>" (7 + 256).
int64_t eagle_prompt_tokens(const encoders::EagleDims& d, int views, int64_t instruction_tokens);

BackboneCost eagle_backbone_cost(const Hardware& hw, const encoders::EagleDims& d, int views, int64_t prompt_tokens);
// BackboneCost::tuned_activation_bytes of one sample of `views` views and `prompt_tokens` tokens.
double tuned_activation_bytes(const encoders::EagleDims& d, int views, int64_t prompt_tokens);
// The backbone's weights as EagleBackbone holds them: the vision tower, mlp1, the embedding table,
// the kept Qwen3 layers and the final norm, `element_bytes` each (its storage dtype).
double backbone_weight_bytes(const encoders::EagleDims& d, double element_bytes);
// Per sample of `views` views and `prompt_tokens` tokens, the buffers one EagleBackbone forward
// holds (a micro-batch runs in one call; the towers' scratch holds one layer's buffers, reused
// by every layer; OnlineBackbone::compute_context's too), in the storage dtype (`element_bytes`)
// unless said: the patch rows; the vision tower's x, its block's h, qkv, attention out, o,
// MLP pre and act, fp32 mean and rstd, the image tokens; the embeddings; the LLM layer's h, q,
// k, v, normed q and k, attention out, o, gate|up, act, fp32 rstd per query head, vl; int32
// indices (vision positions, ids, image rows, LLM positions, context rows); with bf16 storage
// the fp32 vl rows the head reads.
double backbone_forward_bytes(const encoders::EagleDims& d, int views, int64_t prompt_tokens, double element_bytes);

// What GR00T's backbone adds to a rank's memory verdict (Workload's frozen_weight_bytes and
// context_activation_bytes_per_sample): model.backbone = online, the frozen backbone
// (OnlineBackbone: backbone_weight_bytes and backbone_forward_bytes in its storage dtype,
// `element_bytes`: 2 on CUDA with model.precision = bf16, else 4); train.tune_visual, the frozen
// LLM's fp32 weights and the activations kept for the backward (tuned_*; the vision tower's
// parameters are the model's); features read from files (neither), nothing.
struct BackboneMemory {
  double weight_bytes = 0;
  double activation_bytes_per_sample = 0;
};
BackboneMemory backbone_memory(const ModelConfig& mc, const encoders::EagleDims& d, int views, int64_t prompt_tokens,
                               double element_bytes);

// train.tune_visual: the frozen language model's fp32 weights (embedding table, kept Qwen3
// layers, final norm) that TunedBackbone holds whole on every rank (load_eagle_language_model):
// not parameters of the model, so not in the training state's ZeRO shards.
double tuned_frozen_weight_bytes(const encoders::EagleDims& d);

}  // namespace emb
