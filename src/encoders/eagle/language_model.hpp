// Qwen3's first select_layer layers and its final norm through the Ops interface, forward only
// (spec_eagle.md §6; transformers 4.51.3 Qwen3DecoderLayer, Qwen3Model.forward: the features
// are hidden_states[select_layer] = norm(output of the last kept layer)):
//   per layer: h = RMSNorm(x)
//              q = RMSNorm_head(h·Wq), k = RMSNorm_head(h·Wk), v = h·Wv; RoPE (rotate-half, θ)
//              x += o(attention(q, k, v))  causal within each sample, GQA, 1/√hd
//              x += down(silu(gate(h')) · up(h')),  h' = RMSNorm(x)
//   vl = RMSNorm(x; final)
// Samples are the attention's segments; positions restart at 0 in each (batch-1 inference,
// what upstream's left-padded batches give each real token: spec_eagle.md §0.1).
#pragma once
#include <vector>

#include "encoders/common/scratch_pool.hpp"
#include "encoders/eagle/eagle_dims.hpp"
#include "encoders/eagle/eagle_weights.hpp"

namespace emb::encoders {

// embeds [N, E] (backend memory; overwritten: the residual stream) of samples at token offsets
// `sample_offsets` (host, [S + 1]) → vl [N, E] made in `scratch`.
View language_model_forward(const EagleWeights& w, const EagleDims& d, ScratchPool& scratch, const View& embeds,
                            const std::vector<int64_t>& sample_offsets);

}  // namespace emb::encoders
