#include "encoders/eagle/eagle_weights.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace emb::encoders {

namespace {

const std::string kPrefix = "backbone.eagle_model.";
const std::string kVision = kPrefix + "vision_model.vision_model.";
const std::string kLlm = kPrefix + "language_model.model.";

std::string vision_layer(int l) { return str(kVision, "encoder.layers.", l, "."); }
std::string llm_layer(int l) { return str(kLlm, "layers.", l, "."); }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += str(i ? ", " : "", shape[i]);
  return s + "]";
}

// Reads checkpoint tensors after checking their presence and shape.
class Reader {
 public:
  Reader(const WeightSource& source, BackendTensors& store) : source_(source), store_(store) {}

  // The tensor as stored (row-major fp32), checked against `shape`.
  std::vector<float> read(const std::string& name, const std::vector<int64_t>& shape) const {
    check_backbone_tensor(source_, name, shape);
    const int64_t n = source_.info(name).numel();
    std::vector<float> values(static_cast<size_t>(n));
    source_.read(name, 0, n, values.data());
    return values;
  }

  // A [n] vector as [1, n].
  View vector(const std::string& name, int64_t n) const { return store_.upload(read(name, {n}).data(), 1, n); }

  // nn.Linear weights [out, in] of `names`, transposed and set side by side as W [in, Σ out],
  // in the backend's packed form (Ops::pack_linear: the frozen weights are only multiplied).
  View linears(const std::vector<std::string>& names, int64_t in, const std::vector<int64_t>& outs) const {
    int64_t total = 0;
    for (int64_t o : outs) total += o;
    std::vector<float> side_by_side(size_t(in * total));
    int64_t col = 0;
    for (size_t k = 0; k < names.size(); ++k) {
      const std::vector<float> w = read(names[k], {outs[k], in});
      for (int64_t o = 0; o < outs[k]; ++o)
        for (int64_t i = 0; i < in; ++i) side_by_side[size_t(i * total + col + o)] = w[size_t(o * in + i)];
      col += outs[k];
    }
    return packed(side_by_side, in, total);
  }
  // W [in, out] (host, row-major) in the backend's packed form.
  View packed(const std::vector<float>& W, int64_t in, int64_t out) const {
    Ops& ops = store_.ops();
    BackendTensors plain(ops, store_.dtype());
    const View packed = store_.make(1, ops.packed_linear_elements(in, out));
    ops.pack_linear(plain.upload(W.data(), in, out), packed);
    ops.synchronize();  // `plain` is released on return
    return packed;
  }
  View linear(const std::string& name, int64_t in, int64_t out) const { return linears({name}, in, {out}); }

  // Biases of `names` side by side: [1, Σ n].
  View vectors(const std::vector<std::string>& names, const std::vector<int64_t>& ns) const {
    std::vector<float> packed;
    for (size_t k = 0; k < names.size(); ++k) {
      const std::vector<float> b = read(names[k], {ns[k]});
      packed.insert(packed.end(), b.begin(), b.end());
    }
    return store_.upload(packed.data(), 1, int64_t(packed.size()));
  }

  // A [rows, cols] table read in slices of rows (the 151680 × 2048 embedding without a second
  // full copy on the host).
  View table(const std::string& name, int64_t rows, int64_t cols) const {
    check_backbone_tensor(source_, name, {rows, cols});
    const View v = store_.make(rows, cols);
    const int64_t slice = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(cols, 1));
    std::vector<float> buffer;
    for (int64_t r = 0; r < rows; r += slice) {
      const int64_t n = std::min(slice, rows - r);
      buffer.resize(size_t(n * cols));
      source_.read(name, r * cols, (r + n) * cols, buffer.data());
      store_.upload_rows(v, r, buffer.data(), n);
    }
    return v;
  }

 private:
  const WeightSource& source_;
  BackendTensors& store_;
};

}  // namespace

void check_backbone_tensor(const WeightSource& source, const std::string& name, const std::vector<int64_t>& shape) {
  const TensorInfo* info = source.find(name);
  if (!info)
    throw Error(str(source.path(), ": backbone tensor ", name, " is missing (GR00T-N1.5's Eagle backbone reads it; ",
                    "shape ", shape_text(shape), ")"),
                kExitInput);
  if (info->shape != shape)
    throw Error(str(source.path(), ": backbone tensor ", name, " has shape ", shape_text(info->shape), ", expected ",
                    shape_text(shape), " (the Eagle config and backbone_cfg.select_layer)"),
                kExitInput);
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
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  };
  // The bytes in 8-byte words (FNV-1a over words: the same strength for a change anywhere, 8x
  // fewer multiplications), a short tail bytewise.
  auto mix_words = [&](const std::vector<unsigned char>& bytes) {
    const size_t words = bytes.size() / 8;
    for (size_t i = 0; i < words; ++i) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + 8 * i, 8);
      h = (h ^ w) * 0x100000001b3ull;
    }
    mix(bytes.data() + 8 * words, bytes.size() - 8 * words);
  };
  std::vector<unsigned char> buffer;
  const std::string head = kVision + "head.";
  for (const TensorInfo& info : source.tensors()) {  // sorted by name
    const std::string& name = info.name;
    if (name.rfind(kPrefix, 0) != 0 || name.rfind(head, 0) == 0) continue;
    const std::string header = str(name, " ", weight_dtype_name(info.dtype), " ", shape_text(info.shape));
    mix(header.data(), header.size());
    const int64_t size = int64_t(weight_dtype_size(info.dtype));
    const int64_t slice = std::max<int64_t>(1, (int64_t(1) << 24) / size);
    for (int64_t begin = 0; begin < info.numel(); begin += slice) {
      const int64_t end = std::min(info.numel(), begin + slice);
      buffer.resize(size_t((end - begin) * size));
      source.read_raw(name, begin, end, buffer.data());
      mix_words(buffer);
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

EagleWeights load_eagle_weights(const WeightSource& source, const EagleDims& d, BackendTensors& store) {
  // Every tensor is checked before any is read: a bad checkpoint fails before minutes of reading.
  for (const auto& [name, shape] : eagle_tensor_shapes(d)) check_backbone_tensor(source, name, shape);
  const Reader r(source, store);
  const int64_t D = d.vision_hidden, I = d.vision_intermediate, P = d.patch, E = d.llm_hidden;
  const int64_t Q = int64_t(d.llm_heads) * d.head_dim, K = int64_t(d.llm_kv_heads) * d.head_dim;
  EagleWeights w;
  // The patch convolution [D, 3, P, P] is the linear [D, 3·P·P] over (channel, y, x) patch rows.
  {
    const std::vector<float> conv = r.read(kVision + "embeddings.patch_embedding.weight", {D, 3, P, P});
    const int64_t F = 3 * P * P;
    std::vector<float> t(size_t(F * D));
    for (int64_t o = 0; o < D; ++o)
      for (int64_t f = 0; f < F; ++f) t[size_t(f * D + o)] = conv[size_t(o * F + f)];
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
  return w;
}

}  // namespace emb::encoders
