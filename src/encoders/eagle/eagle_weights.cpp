#include "encoders/eagle/eagle_weights.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "encoders/common/checkpoint_reader.hpp"
#include "encoders/common/linear_transpose.hpp"

namespace emb::encoders {

namespace {

const std::string kPrefix = "backbone.eagle_model.";
const std::string kVision = kPrefix + "vision_model.vision_model.";
const std::string kLlm = kPrefix + "language_model.model.";

std::string vision_layer(int l) { return str(kVision, "encoder.layers.", l, "."); }
std::string llm_layer(int l) { return str(kLlm, "layers.", l, "."); }

// The errors' words for the backbone's tensors.
TensorOwner backbone_tensors() {
  return {"backbone tensor", "GR00T-N1.5's Eagle backbone", "the Eagle config and backbone_cfg.select_layer"};
}

// The embedding table, Qwen3's kept layers and the final norm into w, linears in r's form.
void load_language_model(const CheckpointReader& r, const EagleDims& d, EagleWeights& w) {
  const int64_t E = d.llm_hidden;
  const int64_t Q = int64_t(d.llm_heads) * d.head_dim, K = int64_t(d.llm_kv_heads) * d.head_dim;
  w.embed = r.table(kLlm + "embed_tokens.weight", d.vocab, E);
  for (int l = 0; l < d.select_layer; ++l) {
    const std::string L = llm_layer(l), A = L + "self_attn.";
    Qwen3LayerWeights q;
    q.input_norm = r.vector(L + "input_layernorm.weight", E);
    q.post_norm = r.vector(L + "post_attention_layernorm.weight", E);
    q.q_w = r.linear(A + "q_proj.weight", E, Q), q.k_w = r.linear(A + "k_proj.weight", E, K);
    q.v_w = r.linear(A + "v_proj.weight", E, K), q.o_w = r.linear(A + "o_proj.weight", Q, E);
    q.q_norm = r.vector(A + "q_norm.weight", d.head_dim), q.k_norm = r.vector(A + "k_norm.weight", d.head_dim);
    q.gate_up_w = r.linears({L + "mlp.gate_proj.weight", L + "mlp.up_proj.weight"}, E,
                            {d.llm_intermediate, d.llm_intermediate});
    q.down_w = r.linear(L + "mlp.down_proj.weight", d.llm_intermediate, E);
    w.llm.push_back(q);
  }
  w.final_norm = r.vector(kLlm + "norm.weight", E);
}

}  // namespace

void check_backbone_tensor(const WeightSource& source, const std::string& name, const std::vector<int64_t>& shape) {
  check_tensor(source, backbone_tensors(), name, shape);
}

std::vector<std::pair<std::string, std::vector<int64_t>>> eagle_tensor_shapes(const EagleDims& d) {
  const int64_t D = d.vision_hidden, I = d.vision_intermediate, P = d.patch, E = d.llm_hidden;
  const int64_t Q = int64_t(d.llm_heads) * d.head_dim, K = int64_t(d.llm_kv_heads) * d.head_dim;
  std::vector<std::pair<std::string, std::vector<int64_t>>> s = {
      {kVision + "embeddings.patch_embedding.weight", {D, 3, P, P}},
      {kVision + "embeddings.patch_embedding.bias", {D}},
      {kVision + "embeddings.position_embedding.weight", {d.tokens_per_image(), D}}};
  for (int l = 0; l < d.vision_layers; ++l) {
    const std::string L = vision_layer(l);
    for (const char* n : {"layer_norm1", "layer_norm2"}) s.push_back({L + n + ".weight", {D}}), s.push_back({L + n + ".bias", {D}});
    for (const char* n : {"q_proj", "k_proj", "v_proj", "out_proj"})
      s.push_back({L + "self_attn." + n + ".weight", {D, D}}), s.push_back({L + "self_attn." + n + ".bias", {D}});
    s.push_back({L + "mlp.fc1.weight", {I, D}}), s.push_back({L + "mlp.fc1.bias", {I}});
    s.push_back({L + "mlp.fc2.weight", {D, I}}), s.push_back({L + "mlp.fc2.bias", {D}});
  }
  s.push_back({kVision + "post_layernorm.weight", {D}}), s.push_back({kVision + "post_layernorm.bias", {D}});
  s.push_back({kPrefix + "mlp1.0.weight", {E, D}}), s.push_back({kPrefix + "mlp1.0.bias", {E}});
  s.push_back({kLlm + "embed_tokens.weight", {d.vocab, E}});
  for (int l = 0; l < d.select_layer; ++l) {
    const std::string L = llm_layer(l);
    s.push_back({L + "self_attn.q_proj.weight", {Q, E}}), s.push_back({L + "self_attn.k_proj.weight", {K, E}});
    s.push_back({L + "self_attn.v_proj.weight", {K, E}}), s.push_back({L + "self_attn.o_proj.weight", {E, Q}});
    s.push_back({L + "self_attn.q_norm.weight", {d.head_dim}}), s.push_back({L + "self_attn.k_norm.weight", {d.head_dim}});
    s.push_back({L + "mlp.gate_proj.weight", {d.llm_intermediate, E}});
    s.push_back({L + "mlp.up_proj.weight", {d.llm_intermediate, E}});
    s.push_back({L + "mlp.down_proj.weight", {E, d.llm_intermediate}});
    s.push_back({L + "input_layernorm.weight", {E}}), s.push_back({L + "post_attention_layernorm.weight", {E}});
  }
  s.push_back({kLlm + "norm.weight", {E}});
  return s;
}

std::string eagle_weights_digest(const WeightSource& source) {
  const std::string head = kVision + "head.";
  return tensors_digest(source, [&](const std::string& name) {
    return name.rfind(kPrefix, 0) == 0 && name.rfind(head, 0) != 0;
  });
}

EagleWeights load_eagle_weights(const WeightSource& source, const EagleDims& d, BackendTensors& store) {
  // Every tensor is checked before any is read: a bad checkpoint fails before minutes of reading.
  const CheckpointReader r(source, store, backbone_tensors());
  for (const auto& [name, shape] : eagle_tensor_shapes(d)) r.check(name, shape);
  const int64_t D = d.vision_hidden, I = d.vision_intermediate, P = d.patch, E = d.llm_hidden;
  EagleWeights w;
  // The patch convolution [D, 3, P, P] is the linear [D, 3·P·P] over (channel, y, x) patch rows.
  {
    const std::vector<float> conv = r.read(kVision + "embeddings.patch_embedding.weight", {D, 3, P, P});
    const int64_t F = 3 * P * P;
    std::vector<float> t(size_t(F * D));
    transpose_linear_into(conv.data(), D, F, t.data(), D, 0);
    w.patch_w = r.packed(t, F, D);
    std::vector<float> pos = r.read(kVision + "embeddings.position_embedding.weight", {d.tokens_per_image(), D});
    const std::vector<float> bias = r.read(kVision + "embeddings.patch_embedding.bias", {D});
    for (int64_t p = 0; p < d.tokens_per_image(); ++p)
      for (int64_t c = 0; c < D; ++c) pos[size_t(p * D + c)] += bias[size_t(c)];
    w.position_bias = store.upload(pos.data(), d.tokens_per_image(), D);
  }
  for (int l = 0; l < d.vision_layers; ++l) {
    const std::string L = vision_layer(l), A = L + "self_attn.";
    SiglipLayerWeights s;
    s.ln1_w = r.vector(L + "layer_norm1.weight", D), s.ln1_b = r.vector(L + "layer_norm1.bias", D);
    s.qkv_w = r.linears({A + "q_proj.weight", A + "k_proj.weight", A + "v_proj.weight"}, D, {D, D, D});
    s.qkv_b = r.vectors({A + "q_proj.bias", A + "k_proj.bias", A + "v_proj.bias"}, {D, D, D});
    s.out_w = r.linear(A + "out_proj.weight", D, D), s.out_b = r.vector(A + "out_proj.bias", D);
    s.ln2_w = r.vector(L + "layer_norm2.weight", D), s.ln2_b = r.vector(L + "layer_norm2.bias", D);
    s.fc1_w = r.linear(L + "mlp.fc1.weight", D, I), s.fc1_b = r.vector(L + "mlp.fc1.bias", I);
    s.fc2_w = r.linear(L + "mlp.fc2.weight", I, D), s.fc2_b = r.vector(L + "mlp.fc2.bias", D);
    w.vision.push_back(s);
  }
  w.post_ln_w = r.vector(kVision + "post_layernorm.weight", D);
  w.post_ln_b = r.vector(kVision + "post_layernorm.bias", D);
  w.mlp1_w = r.linear(kPrefix + "mlp1.0.weight", D, E), w.mlp1_b = r.vector(kPrefix + "mlp1.0.bias", E);
  load_language_model(r, d, w);
  return w;
}

EagleWeights load_eagle_language_model(const WeightSource& source, const EagleDims& d, BackendTensors& store) {
  const CheckpointReader r(source, store, backbone_tensors(), LinearForm::plain);
  for (const auto& [name, shape] : eagle_tensor_shapes(d))
    if (name.find("language_model.") != std::string::npos) r.check(name, shape);
  EagleWeights w;
  load_language_model(r, d, w);
  return w;
}

}  // namespace emb::encoders
