// SigLIP (GR00T-N1.5's tuned SigLIP2 weights) and mlp1 through the Ops interface, forward only
// (spec_eagle.md §3–4; transformers 4.51.3 SiglipVisionTransformer, Eagle's mlp1):
//   x = patch_rows · W_patch + (position embedding + patch bias)        [n·T, Dv]
//   per layer: x += out(attention(qkv(LN1(x))))  (bidirectional within each image, 1/√hd)
//              x += fc2(gelu_tanh(fc1(LN2(x))))
//   y = mlp1(post_layernorm(x))                                         [n·T, E]
// The images of a call are the attention's segments, so a batch of any size is one pass.
#pragma once
#include "encoders/common/scratch_pool.hpp"
#include "encoders/eagle/eagle_dims.hpp"
#include "encoders/eagle/eagle_weights.hpp"

namespace emb::encoders {

// patch_rows [n_images·T, 3·p·p] in backend memory → the image tokens [n_images·T, E], made in
// `scratch` (which also holds the activations until it is recycled).
View vision_tower_forward(const EagleWeights& w, const EagleDims& d, ScratchPool& scratch, const View& patch_rows,
                          int64_t n_images);

}  // namespace emb::encoders
