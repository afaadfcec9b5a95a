// model.tune_visual (issue 33): Qwen3's kept layers stay frozen but in the graph, as upstream
// trains (Isaac-GR00T 4af2b622 eagle_backbone.py set_trainable_parameters: requires_grad_(False)
// on the language model's parameters, no no_grad around forward_eagle), so the gradient of the
// vl features reaches the image tokens through every kept layer. This is that path: the forward
// of language_model.hpp on the ops with a backward (linear, rmsnorm, attention with a causal
// mask per sample, rope_half, gated_activation), keeping what the backward reads, and a backward
// of the input gradient only (no weight gradient is computed: the LLM is not trained).
//
// The weights are load_eagle_language_model's (plain W [in, out]: the backward multiplies by
// Wᵀ). Grouped-query attention runs as multi-head attention on k and v repeated per query head
// (query head h reads kv head h / (Hq / Hkv)); the backward sums the repeats' gradients.
// Memory: every layer's activations of the micro-batch are kept until the next forward (about
// N · (4E + 5Hq·hd + 2Hkv·hd + 3I) floats per layer for N tokens: activation_floats_per_token);
// nothing is recomputed.
#pragma once
#include <memory>
#include <vector>

#include "encoders/common/backend_tensors.hpp"
#include "encoders/eagle/eagle_dims.hpp"
#include "encoders/eagle/eagle_weights.hpp"

namespace emb::encoders {

class LanguageModelTraining {
 public:
  LanguageModelTraining(Ops& ops, const EagleDims& d) : ops_(ops), d_(d) {}

  // vl [N, E] (made in this object's store) of embeds [N, E] (backend memory, read only) of
  // samples at token offsets `sample_offsets` (host, [S + 1]); positions restart in each sample.
  // The activations are kept until the next forward.
  View forward(const EagleWeights& w, const View& embeds, const std::vector<int64_t>& sample_offsets);
  // dembeds += ∂(Σ vl ⊙ dvl)/∂embeds for the last forward.
  void backward(const EagleWeights& w, const View& dvl, const View& dembeds);

  // Activation floats kept per token (for --plan): what forward keeps for one token.
  static int64_t activation_floats_per_token(const EagleDims& d);

 private:
  struct LayerActivations {
    View x_in, h1, rstd1;       // [N, E], [N, E], [N, 1]
    View q, rstd_q, k, rstd_k;  // before the per-head norms: [N, Hq·hd], [N·Hq, 1], [N, Hkv·hd], [N·Hkv, 1]
    View q_rot, k_rep, v_rep;   // attention's inputs: [N, Hq·hd] each
    View att, lse;              // [N, Hq·hd], [N, Hq]
    View x_mid, h2, rstd2;      // [N, E], [N, E], [N, 1]
    View gate_up, m;            // [N, 2I], [N, I]
  };
  // Causal attention within each sample.
  AttnIndex causal_attention() const;
  // Query head h's columns of a [N, Hq·hd] tensor and kv head h's of a [N, Hkv·hd] one.
  View head(const View& t, int64_t h) const { return t.cols_range(h * d_.head_dim, d_.head_dim); }

  Ops& ops_;
  EagleDims d_;
  std::unique_ptr<BackendTensors> store_;  // the activations of the last forward
  std::unique_ptr<BackendIndex> positions_, sample_of_row_, zeros_;
  std::vector<LayerActivations> layers_;
  View x_out_, rstd_out_;
};

}  // namespace emb::encoders
