#include "encoders/common/pre_norm_block.hpp"

#include <cmath>

namespace emb::encoders {

void pre_norm_block_forward(Ops& ops, const PreNormBlockWeights& w, const PreNormBlockShape& shape,
                            const AttnSegments& segments, const View& x, const PreNormBlockBuffers& b) {
  const int64_t D = x.cols;
  const EncoderAttnConfig attn{shape.heads, shape.heads, shape.head_dim, 1.0f / std::sqrt(float(shape.head_dim)),
                               false};
  ops.layernorm_forward(x, w.ln1_w, w.ln1_b, b.h, b.mean, b.rstd, shape.eps);
  ops.packed_linear_forward(b.h, w.qkv_w, w.qkv_b, Activation::none, View{}, b.qkv);
  ops.encoder_attention_forward(b.qkv.cols_range(0, D), b.qkv.cols_range(D, D), b.qkv.cols_range(2 * D, D), View{},
                                AttnBias{}, b.a, View{}, attn, segments);
  ops.packed_linear_forward(b.a, w.out_w, w.out_b, Activation::none, View{}, b.o);
  ops.gated_residual_forward(x, View{}, b.o);
  ops.layernorm_forward(x, w.ln2_w, w.ln2_b, b.h, b.mean, b.rstd, shape.eps);
  ops.packed_linear_forward(b.h, w.fc1_w, w.fc1_b, shape.mlp, b.pre, b.m);
  ops.packed_linear_forward(b.m, w.fc2_w, w.fc2_b, Activation::none, View{}, b.o);
  ops.gated_residual_forward(x, View{}, b.o);
}

}  // namespace emb::encoders
