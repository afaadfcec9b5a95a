#include "encoders/eagle/vision_tower.hpp"

#include <cmath>
#include <vector>

namespace emb::encoders {

View vision_tower_forward(const EagleWeights& w, const EagleDims& d, BackendTensors& scratch, const View& patch_rows,
                          int64_t n_images) {
  Ops& ops = scratch.ops();
  const int64_t T = d.tokens_per_image(), n = n_images * T, D = d.vision_hidden, I = d.vision_intermediate;
  const View x = scratch.make(n, D), h = scratch.make(n, D), qkv = scratch.make(n, 3 * D), a = scratch.make(n, D);
  const View o = scratch.make(n, D), pre = scratch.make(n, I), m = scratch.make(n, I);
  // Per-row statistics are fp32 on every backend.
  BackendTensors stats(ops, DType::f32);
  const View mean = stats.make(n, 1), rstd = stats.make(n, 1);

  ops.packed_linear_forward(patch_rows, w.patch_w, View{}, Activation::none, View{}, x);
  std::vector<int32_t> position(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) position[size_t(r)] = int32_t(r % T);
  const BackendIndex position_rows(ops, position);
  ops.add_rows(w.position_bias, position_rows.rows(), x, RowIndex{});

  std::vector<int64_t> offsets(size_t(n_images + 1));
  for (int64_t i = 0; i <= n_images; ++i) offsets[size_t(i)] = i * T;
  const AttnSegments images{offsets.data(), nullptr, int(n_images)};
  const int hd = d.vision_head_dim();
  const EncoderAttnConfig attn{d.vision_heads, d.vision_heads, hd, 1.0f / std::sqrt(float(hd)), false};
  for (const SiglipLayerWeights& l : w.vision) {
    ops.layernorm_forward(x, l.ln1_w, l.ln1_b, h, mean, rstd, d.vision_eps);
    ops.packed_linear_forward(h, l.qkv_w, l.qkv_b, Activation::none, View{}, qkv);
    ops.encoder_attention_forward(qkv.cols_range(0, D), qkv.cols_range(D, D), qkv.cols_range(2 * D, D), View{},
                                  AttnBias{}, a, View{}, attn, images);
    ops.packed_linear_forward(a, l.out_w, l.out_b, Activation::none, View{}, o);
    ops.gated_residual_forward(x, View{}, o);
    ops.layernorm_forward(x, l.ln2_w, l.ln2_b, h, mean, rstd, d.vision_eps);
    ops.packed_linear_forward(h, l.fc1_w, l.fc1_b, Activation::gelu_tanh, pre, m);
    ops.packed_linear_forward(m, l.fc2_w, l.fc2_b, Activation::none, View{}, o);
    ops.gated_residual_forward(x, View{}, o);
  }
  ops.layernorm_forward(x, w.post_ln_w, w.post_ln_b, h, mean, rstd, d.vision_eps);
  const View tokens = scratch.make(n, d.llm_hidden);
  ops.packed_linear_forward(h, w.mlp1_w, w.mlp1_b, Activation::none, View{}, tokens);
  return tokens;
}

}  // namespace emb::encoders
