#include "encoders/eagle/vision_tower.hpp"

#include <vector>

namespace emb::encoders {

View vision_tower_forward(const EagleWeights& w, const EagleDims& d, ScratchPool& scratch, const View& patch_rows,
                          int64_t n_images) {
  Ops& ops = scratch.ops();
  const int64_t T = d.tokens_per_image(), n = n_images * T, D = d.vision_hidden, I = d.vision_intermediate;
  const View x = scratch.make(n, D);
  // Per-row statistics are fp32 on every backend.
  const PreNormBlockBuffers buffers{scratch.make(n, D),              scratch.make(n, 3 * D),
                                    scratch.make(n, D),              scratch.make(n, D),
                                    scratch.make(n, I),              scratch.make(n, I),
                                    scratch.make(n, 1, DType::f32), scratch.make(n, 1, DType::f32)};

  ops.packed_linear_forward(patch_rows, w.patch_w, View{}, Activation::none, View{}, x);
  std::vector<int32_t> position(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) position[size_t(r)] = int32_t(r % T);
  ops.add_rows(w.position_bias, scratch.index(position), x, RowIndex{});

  std::vector<int64_t> offsets(size_t(n_images + 1));
  for (int64_t i = 0; i <= n_images; ++i) offsets[size_t(i)] = i * T;
  const AttnSegments images{offsets.data(), nullptr, int(n_images)};
  const PreNormBlockShape shape{d.vision_heads, d.vision_head_dim(), Activation::gelu_tanh, d.vision_eps};
  for (const SiglipLayerWeights& l : w.vision) pre_norm_block_forward(ops, l, shape, images, x, buffers);
  const View h = buffers.h;
  ops.layernorm_forward(x, w.post_ln_w, w.post_ln_b, h, buffers.mean, buffers.rstd, d.vision_eps);
  const View tokens = scratch.make(n, d.llm_hidden);
  ops.packed_linear_forward(h, w.mlp1_w, w.mlp1_b, Activation::none, View{}, tokens);
  return tokens;
}

}  // namespace emb::encoders
