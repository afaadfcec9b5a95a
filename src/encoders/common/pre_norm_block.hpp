// The pre-LayerNorm transformer block of the frozen vision towers (SigLIP in GR00T's Eagle,
// CLIP ViT-H/14 in DreamZero), forward only through the Ops interface:
//   x += out(attention(qkv(LN1(x))))      bidirectional within each segment (image), 1/√hd
//   x += fc2(act(fc1(LN2(x))))            act gelu_tanh (SigLIP) or gelu_erf (CLIP)
// LayerNorms with their own eps (SigLIP 1e-6, CLIP 1e-5).
#pragma once
#include "kernels/ops.hpp"

namespace emb::encoders {

struct PreNormBlockWeights {
  View ln1_w, ln1_b;  // [1, D]
  View qkv_w, qkv_b;  // [D, 3D], [1, 3D]: q | k | v
  View out_w, out_b;  // [D, D], [1, D]
  View ln2_w, ln2_b;
  View fc1_w, fc1_b;  // [D, I], [1, I]
  View fc2_w, fc2_b;  // [I, D], [1, D]
};

struct PreNormBlockShape {
  int heads = 0, head_dim = 0;
  Activation mlp = Activation::gelu_tanh;
  float eps = 0;  // the LayerNorms' (SigLIP 1e-6, CLIP 1e-5)
};

// The activations a block writes, for n rows (reused by every block of a tower).
struct PreNormBlockBuffers {
  View h, qkv, a, o;  // [n, D], [n, 3D], [n, D], [n, D]
  View pre, m;        // [n, I]
  View mean, rstd;    // [n, 1] fp32
};

// x [n, D] updated in place; the images are `segments`.
void pre_norm_block_forward(Ops& ops, const PreNormBlockWeights& w, const PreNormBlockShape& shape,
                            const AttnSegments& segments, const View& x, const PreNormBlockBuffers& b);

}  // namespace emb::encoders
