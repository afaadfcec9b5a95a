#include "encoders/eagle/vision_tower_training.hpp"

#include "core/error.hpp"
#include "encoders/common/linear_transpose.hpp"
#include "encoders/eagle/eagle_weights.hpp"

namespace emb::encoders {
namespace {

// The pieces' views in the layout's order.
std::vector<View*> fields(VisionEmbeddingTensors& t) { return {&t.patch_w, &t.patch_b, &t.position}; }
std::vector<View*> fields(SiglipTrainedLayer& l) {
  return {&l.ln1_w, &l.ln1_b, &l.ln2_w, &l.ln2_b, &l.q_w,   &l.q_b,   &l.k_w,   &l.k_b,
          &l.v_w,   &l.v_b,   &l.out_w, &l.out_b, &l.fc1_w, &l.fc1_b, &l.fc2_w, &l.fc2_b};
}
std::vector<View*> fields(VisionHeadTensors& t) { return {&t.post_ln_w, &t.post_ln_b, &t.mlp1_w, &t.mlp1_b}; }

constexpr int kEmbeddingTensors = 3, kLayerTensors = 16, kHeadTensors = 4;

// Fills `piece`'s views from the layout's tensors first, first + 1, ...
template <class Piece>
Piece piece_views(int first, const LayoutTensor& tensor) {
  Piece p;
  int i = first;
  for (View* v : fields(p)) *v = tensor(i++);
  return p;
}

}  // namespace

std::vector<VisionTensorSlot> vision_tower_layout(const EagleDims& d) {
  std::vector<VisionTensorSlot> out;
  for (const auto& [name, shape] : eagle_tensor_shapes(d)) {
    if (name.find("language_model.") != std::string::npos) break;  // the LLM follows the vision tensors
    VisionTensorSlot s{name, shape, 1, shape[0], false, 0};
    const size_t layer = name.find(".layers.");
    if (layer != std::string::npos) s.piece = 1 + std::stoi(name.substr(layer + 8));
    if (name.find("post_layernorm") != std::string::npos || name.find("mlp1") != std::string::npos)
      s.piece = d.vision_layers + 1;
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

VisionEmbeddingTensors vision_embedding_views(const LayoutTensor& tensor) {
  return piece_views<VisionEmbeddingTensors>(0, tensor);
}
SiglipTrainedLayer vision_layer_views(int layer, const LayoutTensor& tensor) {
  return piece_views<SiglipTrainedLayer>(kEmbeddingTensors + layer * kLayerTensors, tensor);
}
VisionHeadTensors vision_head_views(const EagleDims& d, const LayoutTensor& tensor) {
  return piece_views<VisionHeadTensors>(kEmbeddingTensors + d.vision_layers * kLayerTensors, tensor);
}

VisionTowerTensors vision_tower_views(const float* flat, const EagleDims& d) {
  const std::vector<VisionTensorSlot> layout = vision_tower_layout(d);
  EMB_ASSERT(layout.size() == size_t(kEmbeddingTensors + d.vision_layers * kLayerTensors + kHeadTensors));
  std::vector<const float*> at(layout.size());
  for (size_t i = 0; i < layout.size(); ++i) at[i] = flat, flat += layout[i].rows * layout[i].cols;
  const LayoutTensor tensor = [&](int i) { return view(at[size_t(i)], layout[size_t(i)].rows, layout[size_t(i)].cols); };
  VisionTowerTensors t{vision_embedding_views(tensor), {}, vision_head_views(d, tensor)};
  for (int l = 0; l < d.vision_layers; ++l) t.layers.push_back(vision_layer_views(l, tensor));
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

View VisionTowerTraining::forward(const VisionTowerTensors& p, const View& patch_rows, int64_t n_images) {
  begin(patch_rows, n_images);
  embed(p.embeddings);
  for (size_t l = 0; l < p.layers.size(); ++l) layer_forward(int(l), p.layers[l]);
  return finish(p.head);
}

void VisionTowerTraining::backward(const VisionTowerTensors& p, const View& dtokens, const VisionTowerTensors& g) {
  head_backward(p.head, dtokens, g.head);
  for (size_t l = p.layers.size(); l-- > 0;) layer_backward(int(l), p.layers[l], g.layers[l]);
  embed_backward(p.embeddings, g.embeddings);
}

// Layer by layer as vision_tower_forward, on ops with a backward: the patch GEMM with its bias,
// the position table added per image, pre-LN attention (q, k, v apart, mask full over the
// image's tokens, scale 1/√hd) and gelu_tanh MLP, post-LN, mlp1; every input a backward reads
// is kept.
void VisionTowerTraining::begin(const View& patch_rows, int64_t n_images) {
  const int64_t T = d_.tokens_per_image(), n = n_images * T;
  store_ = std::make_unique<BackendTensors>(ops_, DType::f32);
  std::vector<int32_t> image_of_row(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) image_of_row[size_t(r)] = int32_t(r / T);
  image_of_row_ = std::make_unique<BackendIndex>(ops_, image_of_row);
  patch_rows_ = patch_rows, n_images_ = n_images;
  layers_.assign(size_t(d_.vision_layers), LayerActivations{});
  x_ = store_->make(n, d_.vision_hidden), o_ = store_->make(n, d_.vision_hidden);
}

void VisionTowerTraining::embed(const VisionEmbeddingTensors& p) {
  const int64_t T = d_.tokens_per_image();
  ops_.linear_forward(patch_rows_, p.patch_w, p.patch_b, Activation::none, View{}, x_);
  for (int64_t i = 0; i < n_images_; ++i) ops_.add(x_.rows_range(i * T, T), p.position, x_.rows_range(i * T, T));
}

void VisionTowerTraining::layer_forward(int layer, const SiglipTrainedLayer& w) {
  const int64_t n = x_.rows, D = d_.vision_hidden, I = d_.vision_intermediate;
  const int H = d_.vision_heads;
  BackendTensors& a = *store_;
  LayerActivations& s = layers_[size_t(layer)];
  s.x_in = x_, s.h1 = a.make(n, D), s.mean1 = a.make(n, 1), s.rstd1 = a.make(n, 1);
  ops_.layernorm_forward(x_, w.ln1_w, w.ln1_b, s.h1, s.mean1, s.rstd1, d_.vision_eps);
  s.q = a.make(n, D), s.k = a.make(n, D), s.v = a.make(n, D), s.att = a.make(n, D), s.lse = a.make(n, H);
  ops_.linear_forward(s.h1, w.q_w, w.q_b, Activation::none, View{}, s.q);
  ops_.linear_forward(s.h1, w.k_w, w.k_b, Activation::none, View{}, s.k);
  ops_.linear_forward(s.h1, w.v_w, w.v_b, Activation::none, View{}, s.v);
  ops_.attention_forward(s.q, s.k, s.v, s.att, s.lse, AttnConfig{H, d_.vision_head_dim()}, image_attention());
  ops_.linear_forward(s.att, w.out_w, w.out_b, Activation::none, View{}, o_);
  s.x_mid = a.make(n, D);
  ops_.add(x_, o_, s.x_mid);
  s.h2 = a.make(n, D), s.mean2 = a.make(n, 1), s.rstd2 = a.make(n, 1);
  ops_.layernorm_forward(s.x_mid, w.ln2_w, w.ln2_b, s.h2, s.mean2, s.rstd2, d_.vision_eps);
  s.pre = a.make(n, I), s.m = a.make(n, I);
  ops_.linear_forward(s.h2, w.fc1_w, w.fc1_b, Activation::gelu_tanh, s.pre, s.m);
  ops_.linear_forward(s.m, w.fc2_w, w.fc2_b, Activation::none, View{}, o_);
  x_ = a.make(n, D);
  ops_.add(s.x_mid, o_, x_);
}

View VisionTowerTraining::finish(const VisionHeadTensors& p) {
  const int64_t n = x_.rows, D = d_.vision_hidden;
  BackendTensors& a = *store_;
  h_out_ = a.make(n, D), mean_out_ = a.make(n, 1), rstd_out_ = a.make(n, 1);
  ops_.layernorm_forward(x_, p.post_ln_w, p.post_ln_b, h_out_, mean_out_, rstd_out_, d_.vision_eps);
  const View tokens = a.make(n, d_.llm_hidden);
  ops_.linear_forward(h_out_, p.mlp1_w, p.mlp1_b, Activation::none, View{}, tokens);
  return tokens;
}

// The forward in reverse; dx is the residual stream's gradient, which each sublayer's norm
// backward adds to.
void VisionTowerTraining::head_backward(const VisionHeadTensors& p, const View& dtokens, const VisionHeadTensors& g) {
  EMB_ASSERT(store_);
  const int64_t n = x_.rows, D = d_.vision_hidden, I = d_.vision_intermediate;
  scratch_ = std::make_unique<BackendTensors>(ops_, DType::f32);
  BackendTensors& s = *scratch_;
  dx_ = s.make(n, D), dh_ = s.make(n, D), dm_ = s.make(n, I);
  dq_ = s.make(n, D), dk_ = s.make(n, D), dv_ = s.make(n, D), datt_ = s.make(n, D);
  ops_.zero(dh_), ops_.zero(dx_);
  ops_.linear_backward(h_out_, p.mlp1_w, Activation::none, View{}, dtokens, dh_, g.mlp1_w, g.mlp1_b);
  ops_.layernorm_backward(x_, p.post_ln_w, mean_out_, rstd_out_, dh_, dx_, g.post_ln_w, g.post_ln_b);
}

void VisionTowerTraining::layer_backward(int layer, const SiglipTrainedLayer& w, const SiglipTrainedLayer& g) {
  EMB_ASSERT(scratch_);
  const AttnConfig attn{d_.vision_heads, d_.vision_head_dim()};
  const LayerActivations& s = layers_[size_t(layer)];
  ops_.zero(dm_), ops_.zero(dh_);
  ops_.linear_backward(s.m, w.fc2_w, Activation::none, View{}, dx_, dm_, g.fc2_w, g.fc2_b);
  ops_.linear_backward(s.h2, w.fc1_w, Activation::gelu_tanh, s.pre, dm_, dh_, g.fc1_w, g.fc1_b);
  ops_.layernorm_backward(s.x_mid, w.ln2_w, s.mean2, s.rstd2, dh_, dx_, g.ln2_w, g.ln2_b);
  ops_.zero(datt_), ops_.zero(dq_), ops_.zero(dk_), ops_.zero(dv_), ops_.zero(dh_);
  ops_.linear_backward(s.att, w.out_w, Activation::none, View{}, dx_, datt_, g.out_w, g.out_b);
  ops_.attention_backward(s.q, s.k, s.v, s.att, s.lse, datt_, dq_, dk_, dv_, attn, image_attention());
  ops_.linear_backward(s.h1, w.q_w, Activation::none, View{}, dq_, dh_, g.q_w, g.q_b);
  ops_.linear_backward(s.h1, w.k_w, Activation::none, View{}, dk_, dh_, g.k_w, g.k_b);
  ops_.linear_backward(s.h1, w.v_w, Activation::none, View{}, dv_, dh_, g.v_w, g.v_b);
  ops_.layernorm_backward(s.x_in, w.ln1_w, s.mean1, s.rstd1, dh_, dx_, g.ln1_w, g.ln1_b);
}

void VisionTowerTraining::embed_backward(const VisionEmbeddingTensors& p, const VisionEmbeddingTensors& g) {
  EMB_ASSERT(scratch_);
  const int64_t T = d_.tokens_per_image();
  ops_.linear_backward(patch_rows_, p.patch_w, Activation::none, View{}, dx_, View{}, g.patch_w, g.patch_b);
  for (int64_t i = 0; i < n_images_; ++i) ops_.add(g.position, dx_.rows_range(i * T, T), g.position);
}

}  // namespace emb::encoders
