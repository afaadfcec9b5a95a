#include "plan/backbone_cost.hpp"

#include "encoders/eagle/language_model_training.hpp"
#include "encoders/eagle/vision_tower_training.hpp"

namespace emb {

int64_t eagle_prompt_tokens(const encoders::EagleDims& d, int views, int64_t instruction_tokens) {
  // Counted on the real tokenizer (tests/encoders/test_eagle_backbone: 1 view and 12 instruction
  // tokens give 294; 3 views and none, 808).
  return 19 + int64_t(views) * (d.tokens_per_image() + 7) + instruction_tokens;
}

namespace {

// The language model's parameters as load_eagle_language_model reads them: the embedding table,
// the kept Qwen3 layers (norms, q/k/v/o, q/k norms, gate/up/down) and the final norm.
double llm_params(const encoders::EagleDims& d) {
  const double E = d.llm_hidden, Il = d.llm_intermediate;
  const double q = double(d.llm_heads) * d.head_dim, kv = double(d.llm_kv_heads) * d.head_dim;
  return double(d.vocab) * E + E + d.select_layer * (E * (q + 2 * kv) + q * E + 3 * E * Il + 2 * E + 2 * d.head_dim);
}

// The vision tower's parameters (patch GEMM, position table and patch bias, the SigLIP layers,
// post-norm) and mlp1's.
double vision_params(const encoders::EagleDims& d) {
  const double T = d.tokens_per_image(), Dv = d.vision_hidden, Iv = d.vision_intermediate, E = d.llm_hidden;
  return double(d.patch_features()) * Dv + 3 * Dv + T * Dv + d.vision_layers * (4 * Dv * Dv + 2 * Dv * Iv + 9 * Dv + Iv) +
         Dv * E + E;
}

}  // namespace

double backbone_weight_bytes(const encoders::EagleDims& d, double element_bytes) {
  return element_bytes * (vision_params(d) + llm_params(d));
}

double backbone_forward_bytes(const encoders::EagleDims& d, int views, int64_t prompt_tokens, double element_bytes) {
  const double n = double(views) * d.tokens_per_image(), N = double(prompt_tokens);
  const double Dv = d.vision_hidden, Iv = d.vision_intermediate, E = d.llm_hidden, Il = d.llm_intermediate;
  const double q = double(d.llm_heads) * d.head_dim, kv = double(d.llm_kv_heads) * d.head_dim;
  const double vision = n * (d.patch_features() + 7 * Dv + 2 * Iv + E), llm = N * (4 * E + 3 * q + 3 * kv + 3 * Il);
  const double indices = 2 * n + 3 * N;  // vision positions, image rows; ids, LLM positions, context rows
  const double fp32 = 2 * n + N * d.llm_heads + (element_bytes < 4 ? N * E : 0);
  return element_bytes * (vision + llm) + 4 * (indices + fp32);
}

BackboneMemory backbone_memory(const ModelConfig& mc, const encoders::EagleDims& d, int views, int64_t prompt_tokens,
                               double element_bytes) {
  if (mc.tune_visual) return {tuned_frozen_weight_bytes(d), tuned_activation_bytes(d, views, prompt_tokens)};
  if (mc.online_backbone)
    return {backbone_weight_bytes(d, element_bytes), backbone_forward_bytes(d, views, prompt_tokens, element_bytes)};
  return {};
}

BackboneCost eagle_backbone_cost(const Hardware& hw, const encoders::EagleDims& d, int views, int64_t prompt_tokens) {
  BackboneCost c;
  c.views = views, c.prompt_tokens = prompt_tokens;
  const double T = d.tokens_per_image(), Dv = d.vision_hidden, Iv = d.vision_intermediate, E = d.llm_hidden;
  const double q = double(d.llm_heads) * d.head_dim, kv = double(d.llm_kv_heads) * d.head_dim;
  const double N = double(prompt_tokens), Il = d.llm_intermediate;
  const double vision_attention = d.vision_layers * 4 * T * T * Dv;  // scores and values, all heads
  const double vision_gemm = 2 * T * Dv * d.patch_features() + d.vision_layers * 2 * T * (4 * Dv * Dv + 2 * Dv * Iv) +
                             2 * T * Dv * E;
  const double llm_attention = d.select_layer * 2 * q * N * (N + 1);  // causal: N(N+1)/2 pairs, 4 FLOPs per dim
  const double llm_gemm = d.select_layer * N * (2 * E * (q + 2 * kv) + 2 * q * E + 6 * E * Il);
  c.vision_flops = views * (vision_gemm + vision_attention);
  c.llm_flops = llm_gemm + llm_attention;
  c.attention_flops = views * vision_attention + llm_attention;
  c.forward_s = (views * vision_gemm + llm_gemm) / hw.gemm_bf16 + c.attention_flops / hw.attention_bf16;
  c.weight_bytes = backbone_weight_bytes(d, 2);
  c.forward_bytes = backbone_forward_bytes(d, views, prompt_tokens, 2);
  c.tuned_flops = views * (3 * vision_gemm + 3.5 * vision_attention) + 2 * llm_gemm + 3.5 * llm_attention;
  c.tuned_activation_bytes = tuned_activation_bytes(d, views, prompt_tokens);
  return c;
}

double tuned_activation_bytes(const encoders::EagleDims& d, int views, int64_t prompt_tokens) {
  return 4 * (double(views) * d.tokens_per_image() * double(encoders::VisionTowerTraining::activation_floats_per_token(d)) +
              double(prompt_tokens) * double(encoders::LanguageModelTraining::activation_floats_per_token(d)));
}

double tuned_frozen_weight_bytes(const encoders::EagleDims& d) { return 4 * llm_params(d); }

}  // namespace emb
