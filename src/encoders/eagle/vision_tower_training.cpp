#include "encoders/eagle/vision_tower_training.hpp"

#include "core/error.hpp"
#include "encoders/common/linear_transpose.hpp"
#include "encoders/eagle/eagle_weights.hpp"

namespace emb::encoders {
namespace {

// The struct's views in the layout's order.
std::vector<View*> fields(VisionTowerTensors& t) {
  std::vector<View*> f = {&t.patch_w, &t.patch_b, &t.position};
  for (SiglipTrainedLayer& l : t.layers)
    for (View* v : {&l.ln1_w, &l.ln1_b, &l.ln2_w, &l.ln2_b, &l.q_w, &l.q_b, &l.k_w, &l.k_b, &l.v_w, &l.v_b, &l.out_w,
                    &l.out_b, &l.fc1_w, &l.fc1_b, &l.fc2_w, &l.fc2_b})
      f.push_back(v);
  for (View* v : {&t.post_ln_w, &t.post_ln_b, &t.mlp1_w, &t.mlp1_b}) f.push_back(v);
  return f;
}

}  // namespace

std::vector<VisionTensorSlot> vision_tower_layout(const EagleDims& d) {
  std::vector<VisionTensorSlot> out;
  for (const auto& [name, shape] : eagle_tensor_shapes(d)) {
    if (name.find("language_model.") != std::string::npos) break;  // the LLM follows the vision tensors
    VisionTensorSlot s{name, shape, 1, shape[0], false};
    if (name.find("position_embedding") != std::string::npos) {
      s.rows = shape[0], s.cols = shape[1];
    } else if (shape.size() > 1) {  // [out, in] or the convolution [out, 3, p, p]: W [in, out]
      s.rows = 1, s.cols = shape[0], s.transposed = true;
      for (size_t k = 1; k < shape.size(); ++k) s.rows *= shape[k];
    }
    out.push_back(s);
  }
  return out;
}

int64_t vision_tower_elements(const EagleDims& d) {
  int64_t n = 0;
  for (const VisionTensorSlot& s : vision_tower_layout(d)) n += s.rows * s.cols;
  return n;
}

VisionTowerTensors vision_tower_views(const float* flat, const EagleDims& d) {
  VisionTowerTensors t;
  t.layers.resize(size_t(d.vision_layers));
  const std::vector<View*> f = fields(t);
  const std::vector<VisionTensorSlot> layout = vision_tower_layout(d);
  EMB_ASSERT(f.size() == layout.size());
  for (size_t i = 0; i < f.size(); ++i) {
    *f[i] = view(flat, layout[i].rows, layout[i].cols);
    flat += layout[i].rows * layout[i].cols;
  }
  return t;
}

std::vector<float> read_vision_tower(const WeightSource& source, const EagleDims& d) {
  const std::vector<VisionTensorSlot> layout = vision_tower_layout(d);
  for (const VisionTensorSlot& s : layout) check_backbone_tensor(source, s.name, s.checkpoint_shape);
  std::vector<float> flat;
  flat.reserve(size_t(vision_tower_elements(d)));
  std::vector<float> stored;
  for (const VisionTensorSlot& s : layout) {
    stored.resize(size_t(s.rows * s.cols));
    source.read(s.name, 0, s.rows * s.cols, stored.data());
    if (!s.transposed) {
      flat.insert(flat.end(), stored.begin(), stored.end());
      continue;
    }
    flat.resize(flat.size() + stored.size());
    transpose_linear_into(stored.data(), s.cols, s.rows, &flat[flat.size() - stored.size()], s.cols, 0);
  }
  return flat;
}

// forward's store per token: the embedded x and the shared sublayer output o (D each); per layer
// h1, q, k, v, att, x_mid, h2 and the next x (D each), pre and m (I each), lse (H), two means and
// two rstds; after the layers h_out (D), its mean and rstd, the mlp1 tokens (E).
int64_t VisionTowerTraining::activation_floats_per_token(const EagleDims& d) {
  const int64_t D = d.vision_hidden, I = d.vision_intermediate;
  const int64_t per_layer = 8 * D + 2 * I + d.vision_heads + 4;
  return d.patch_features() + 3 * D + 2 + d.llm_hidden + d.vision_layers * per_layer;
}

AttnIndex VisionTowerTraining::image_attention() const {
  AttnIndex idx;
  idx.mask = AttnMask::full, idx.q_seq = idx.k_seq = image_of_row_->data();
  return idx;
}

// Layer by layer as vision_tower_forward, on ops with a backward: the patch GEMM with its bias,
// the position table added per image, pre-LN attention (q, k, v apart, mask full over the
// image's tokens, scale 1/√hd) and gelu_tanh MLP, post-LN, mlp1; every input a backward reads
// is kept.
View VisionTowerTraining::forward(const VisionTowerTensors& p, const View& patch_rows, int64_t n_images) {
  const int64_t T = d_.tokens_per_image(), n = n_images * T, D = d_.vision_hidden, I = d_.vision_intermediate;
  const int H = d_.vision_heads;
  store_ = std::make_unique<BackendTensors>(ops_, DType::f32);
  BackendTensors& a = *store_;
  std::vector<int32_t> image_of_row(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) image_of_row[size_t(r)] = int32_t(r / T);
  image_of_row_ = std::make_unique<BackendIndex>(ops_, image_of_row);
  const AttnIndex images = image_attention();
  patch_rows_ = patch_rows, n_images_ = n_images;

  View x = a.make(n, D);
  ops_.linear_forward(patch_rows, p.patch_w, p.patch_b, Activation::none, View{}, x);
  for (int64_t i = 0; i < n_images; ++i) ops_.add(x.rows_range(i * T, T), p.position, x.rows_range(i * T, T));
  layers_.assign(p.layers.size(), LayerActivations{});
  const View o = a.make(n, D);
  for (size_t l = 0; l < p.layers.size(); ++l) {
    const SiglipTrainedLayer& w = p.layers[l];
    LayerActivations& s = layers_[l];
    s.x_in = x, s.h1 = a.make(n, D), s.mean1 = a.make(n, 1), s.rstd1 = a.make(n, 1);
    ops_.layernorm_forward(x, w.ln1_w, w.ln1_b, s.h1, s.mean1, s.rstd1, d_.vision_eps);
    s.q = a.make(n, D), s.k = a.make(n, D), s.v = a.make(n, D), s.att = a.make(n, D), s.lse = a.make(n, H);
    ops_.linear_forward(s.h1, w.q_w, w.q_b, Activation::none, View{}, s.q);
    ops_.linear_forward(s.h1, w.k_w, w.k_b, Activation::none, View{}, s.k);
    ops_.linear_forward(s.h1, w.v_w, w.v_b, Activation::none, View{}, s.v);
    ops_.attention_forward(s.q, s.k, s.v, s.att, s.lse, AttnConfig{H, d_.vision_head_dim()}, images);
    ops_.linear_forward(s.att, w.out_w, w.out_b, Activation::none, View{}, o);
    s.x_mid = a.make(n, D);
    ops_.add(x, o, s.x_mid);
    s.h2 = a.make(n, D), s.mean2 = a.make(n, 1), s.rstd2 = a.make(n, 1);
    ops_.layernorm_forward(s.x_mid, w.ln2_w, w.ln2_b, s.h2, s.mean2, s.rstd2, d_.vision_eps);
    s.pre = a.make(n, I), s.m = a.make(n, I);
    ops_.linear_forward(s.h2, w.fc1_w, w.fc1_b, Activation::gelu_tanh, s.pre, s.m);
    ops_.linear_forward(s.m, w.fc2_w, w.fc2_b, Activation::none, View{}, o);
    x = a.make(n, D);
    ops_.add(s.x_mid, o, x);
  }
  x_out_ = x, h_out_ = a.make(n, D), mean_out_ = a.make(n, 1), rstd_out_ = a.make(n, 1);
  ops_.layernorm_forward(x_out_, p.post_ln_w, p.post_ln_b, h_out_, mean_out_, rstd_out_, d_.vision_eps);
  const View tokens = a.make(n, d_.llm_hidden);
  ops_.linear_forward(h_out_, p.mlp1_w, p.mlp1_b, Activation::none, View{}, tokens);
  return tokens;
}

// The forward in reverse; dx is the residual stream's gradient, which each sublayer's norm
// backward adds to.
void VisionTowerTraining::backward(const VisionTowerTensors& p, const View& dtokens, const VisionTowerTensors& g) {
  EMB_ASSERT(store_ && layers_.size() == p.layers.size());
  const int64_t T = d_.tokens_per_image(), n = n_images_ * T, D = d_.vision_hidden, I = d_.vision_intermediate;
  const AttnIndex images = image_attention();
  const AttnConfig attn{d_.vision_heads, d_.vision_head_dim()};
  BackendTensors scratch(ops_, DType::f32);
  const View dx = scratch.make(n, D), dh = scratch.make(n, D), dm = scratch.make(n, I);
  const View dq = scratch.make(n, D), dk = scratch.make(n, D), dv = scratch.make(n, D), datt = scratch.make(n, D);
  ops_.zero(dh), ops_.zero(dx);
  ops_.linear_backward(h_out_, p.mlp1_w, Activation::none, View{}, dtokens, dh, g.mlp1_w, g.mlp1_b);
  ops_.layernorm_backward(x_out_, p.post_ln_w, mean_out_, rstd_out_, dh, dx, g.post_ln_w, g.post_ln_b);
  for (size_t l = p.layers.size(); l-- > 0;) {
    const SiglipTrainedLayer& w = p.layers[l];
    const SiglipTrainedLayer& gw = g.layers[l];
    const LayerActivations& s = layers_[l];
    ops_.zero(dm), ops_.zero(dh);
    ops_.linear_backward(s.m, w.fc2_w, Activation::none, View{}, dx, dm, gw.fc2_w, gw.fc2_b);
    ops_.linear_backward(s.h2, w.fc1_w, Activation::gelu_tanh, s.pre, dm, dh, gw.fc1_w, gw.fc1_b);
    ops_.layernorm_backward(s.x_mid, w.ln2_w, s.mean2, s.rstd2, dh, dx, gw.ln2_w, gw.ln2_b);
    ops_.zero(datt), ops_.zero(dq), ops_.zero(dk), ops_.zero(dv), ops_.zero(dh);
    ops_.linear_backward(s.att, w.out_w, Activation::none, View{}, dx, datt, gw.out_w, gw.out_b);
    ops_.attention_backward(s.q, s.k, s.v, s.att, s.lse, datt, dq, dk, dv, attn, images);
    ops_.linear_backward(s.h1, w.q_w, Activation::none, View{}, dq, dh, gw.q_w, gw.q_b);
    ops_.linear_backward(s.h1, w.k_w, Activation::none, View{}, dk, dh, gw.k_w, gw.k_b);
    ops_.linear_backward(s.h1, w.v_w, Activation::none, View{}, dv, dh, gw.v_w, gw.v_b);
    ops_.layernorm_backward(s.x_in, w.ln1_w, s.mean1, s.rstd1, dh, dx, gw.ln1_w, gw.ln1_b);
  }
  ops_.linear_backward(patch_rows_, p.patch_w, Activation::none, View{}, dx, View{}, g.patch_w, g.patch_b);
  for (int64_t i = 0; i < n_images_; ++i) ops_.add(g.position, dx.rows_range(i * T, T), g.position);
}

}  // namespace emb::encoders
