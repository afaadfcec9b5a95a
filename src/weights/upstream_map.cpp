#include "weights/upstream_map.hpp"

#include <cctype>

#include "core/error.hpp"
#include "weights/tensor_info.hpp"

namespace emb {
namespace {

using Rule = UpstreamNameMap::Rule;

// How an upstream attention or feed-forward module names its linears: diffusers' Attention
// (to_q, to_k, to_v, to_out.0) and FeedForward (net.0.proj, net.2) in GR00T-N1.5; Wan's
// SelfAttention/CrossAttention (q, k, v, o, with RMSNorms norm_q/norm_k) and ffn Sequential
// (0, 2) in DreamZero.
struct ModuleNames {
  const char* q_k_v_prefix;  // before "q", "k", "v"
  const char* out;           // the output projection
  bool qk_norms;             // RMSNorm weights norm_q, norm_k on the queries and keys
  const char* fc1;           // the feed-forward's first and second linear
  const char* fc2;
};
const ModuleNames kDiffusers{"to_", "to_out.0", false, "ff.net.0.proj", "ff.net.2"};
const ModuleNames kWan{"", "o", true, "ffn.0", "ffn.2"};

// Rules for the parameters of one module: our `.weight`/`.bias` and upstream's names.
struct RuleTable {
  std::vector<Rule> rules;

  // nn.Linear: weight transposed, bias as is.
  void linear(const std::string& ours, const std::string& theirs, TuneGroup g) {
    rules.push_back({ours + ".weight", theirs + ".weight", UpstreamLayout::linear, g});
    rules.push_back({ours + ".bias", theirs + ".bias", UpstreamLayout::same, g});
  }
  // An affine LayerNorm: weight and bias as is.
  void norm(const std::string& ours, const std::string& theirs, TuneGroup g) {
    rules.push_back({ours + ".weight", theirs + ".weight", UpstreamLayout::same, g});
    rules.push_back({ours + ".bias", theirs + ".bias", UpstreamLayout::same, g});
  }
  // CategorySpecificLinear: W [E, in, out] and b [E, out], ours alike.
  void per_embodiment(const std::string& ours, const std::string& theirs, TuneGroup g) {
    rules.push_back({ours + ".weight", theirs + ".W", UpstreamLayout::same, g});
    rules.push_back({ours + ".bias", theirs + ".b", UpstreamLayout::same, g});
  }
  // CategorySpecificLinear of one embodiment slot (DreamZero's): upstream [1, in, out] and
  // [1, out], ours a plain linear [in, out] and [out].
  void one_slot(const std::string& ours, const std::string& theirs, TuneGroup g) {
    rules.push_back({ours + ".weight", theirs + ".W", UpstreamLayout::squeeze, g});
    rules.push_back({ours + ".bias", theirs + ".b", UpstreamLayout::squeeze, g});
  }
  void tensor(const std::string& ours, const std::string& theirs, UpstreamLayout layout, TuneGroup g) {
    rules.push_back({ours, theirs, layout, g});
  }
  // A tensor of the Eagle backbone train.tune_visual trains: ours is upstream's full name.
  void visual(const std::string& name, UpstreamLayout layout) {
    rules.push_back({name, name, layout, TuneGroup::visual, false});
  }
  // The backbone's nn.Linear and LayerNorm: ours W [in, out] and vectors [1, n].
  void visual_linear(const std::string& name) {
    visual(name + ".weight", UpstreamLayout::linear);
    visual(name + ".bias", UpstreamLayout::row);
  }
  void visual_norm(const std::string& name) {
    visual(name + ".weight", UpstreamLayout::row);
    visual(name + ".bias", UpstreamLayout::row);
  }
  // Our attention `ours` (q, k, v, o, norm_q, norm_k) as upstream's module `theirs`.
  void attention(const std::string& ours, const std::string& theirs, const ModuleNames& n, TuneGroup g) {
    for (const char* p : {"q", "k", "v"}) linear(str(ours, ".", p), str(theirs, ".", n.q_k_v_prefix, p), g);
    linear(ours + ".o", str(theirs, ".", n.out), g);
    if (!n.qk_norms) return;
    for (const char* p : {"norm_q", "norm_k"})
      tensor(str(ours, ".", p, ".weight"), str(theirs, ".", p, ".weight"), UpstreamLayout::same, g);
  }
  // Our feed-forward `ours` (fc1, fc2) as the linears of upstream's block `theirs`.
  void ffn(const std::string& ours, const std::string& theirs, const ModuleNames& n, TuneGroup g) {
    linear(ours + ".fc1", str(theirs, ".", n.fc1), g);
    linear(ours + ".fc2", str(theirs, ".", n.fc2), g);
  }
};

// train.tune_visual's tensors (encoders/eagle/vision_tower_training.hpp vision_tower_layout):
// the SigLIP vision tower (transformers SiglipVisionModel) and mlp1 of Isaac-GR00T 4af2b622's
// EagleBackbone, named as the checkpoint does.
void add_vision_tower_rules(RuleTable& t) {
  const std::string vision = "backbone.eagle_model.vision_model.vision_model.";
  t.visual(vision + "embeddings.patch_embedding.weight", UpstreamLayout::image_patch);
  t.visual(vision + "embeddings.patch_embedding.bias", UpstreamLayout::row);
  t.visual(vision + "embeddings.position_embedding.weight", UpstreamLayout::same);
  const std::string layer = vision + "encoder.layers.{l}.";
  t.visual_norm(layer + "layer_norm1");
  t.visual_norm(layer + "layer_norm2");
  for (const char* p : {"q_proj", "k_proj", "v_proj", "out_proj"}) t.visual_linear(str(layer, "self_attn.", p));
  t.visual_linear(layer + "mlp.fc1");
  t.visual_linear(layer + "mlp.fc2");
  t.visual_norm(vision + "post_layernorm");
  t.visual_linear("backbone.eagle_model.mlp1.0");
}

// GR00T-N1.5's action head (Isaac-GR00T 4af2b622: flow_matching_action_head.py,
// cross_attention_dit.py, action_encoder.py; UPSTREAM.md's map).
std::vector<Rule> gr00t_rules() {
  RuleTable t;
  const TuneGroup always = TuneGroup::always, proj = TuneGroup::projector, dit = TuneGroup::diffusion_model;
  t.norm("vlln", "vlln", always);
  const std::string vl = "vl_self_attention.transformer_blocks.{l}";
  t.norm("vl_blocks.{l}.ln1", vl + ".norm1", always);
  t.attention("vl_blocks.{l}.attn", vl + ".attn1", kDiffusers, always);
  t.norm("vl_blocks.{l}.ln2", vl + ".norm3", always);
  t.ffn("vl_blocks.{l}.ffn", vl, kDiffusers, always);
  t.per_embodiment("state_enc.fc1", "state_encoder.layer1", proj);
  t.per_embodiment("state_enc.fc2", "state_encoder.layer2", proj);
  for (int i = 1; i <= 3; ++i) t.per_embodiment(str("action_enc.fc", i), str("action_encoder.W", i), proj);
  t.tensor("future_tokens", "future_tokens.weight", UpstreamLayout::same, always);
  t.tensor("pos_emb", "position_embedding.weight", UpstreamLayout::same, proj);
  t.linear("time_enc.fc1", "model.timestep_encoder.timestep_embedder.linear_1", dit);
  t.linear("time_enc.fc2", "model.timestep_encoder.timestep_embedder.linear_2", dit);
  const std::string block = "model.transformer_blocks.{l}";
  t.linear("blocks.{l}.norm1.linear", block + ".norm1.linear", dit);
  t.attention("blocks.{l}.attn1", block + ".attn1", kDiffusers, dit);
  t.ffn("blocks.{l}.ffn", block, kDiffusers, dit);
  t.linear("proj_out_1", "model.proj_out_1", dit);
  t.linear("proj_out_2", "model.proj_out_2", dit);
  t.per_embodiment("action_dec.fc1", "action_decoder.layer1", proj);
  t.per_embodiment("action_dec.fc2", "action_decoder.layer2", proj);
  add_vision_tower_rules(t);
  return t.rules;
}

// DreamZero's CausalWanModel (dreamzero ab790c1 wan_video_dit_action_casual_chunk.py, Wan2.1's
// native names; spec_dreamzero.md's parameter table) as our wan model has it in the DreamZero
// layout (the states, the CLIP context, the y channels). Everything is the diffusion model.
// The patch embedding's input rows are upstream's channel order [latents | y] per patch pixel
// (TokenConfig::embed_patch_dim), so its map is a permutation.
std::vector<Rule> dreamzero_rules() {
  RuleTable t;
  const TuneGroup dit = TuneGroup::diffusion_model;
  t.tensor("patch_embed.weight", "patch_embedding.weight", UpstreamLayout::patch, dit);
  t.tensor("patch_embed.bias", "patch_embedding.bias", UpstreamLayout::same, dit);
  t.linear("text_emb.fc1", "text_embedding.0", dit);
  t.linear("text_emb.fc2", "text_embedding.2", dit);
  t.linear("time_enc.fc1", "time_embedding.0", dit);
  t.linear("time_enc.fc2", "time_embedding.2", dit);
  t.linear("time_proj", "time_projection.1", dit);
  t.tensor("blocks.{l}.modulation", "blocks.{l}.modulation", UpstreamLayout::squeeze, dit);
  t.attention("blocks.{l}.attn1", "blocks.{l}.self_attn", kWan, dit);
  t.norm("blocks.{l}.norm3", "blocks.{l}.norm3", dit);
  t.attention("blocks.{l}.attn2", "blocks.{l}.cross_attn", kWan, dit);
  t.linear("blocks.{l}.attn2.k_img", "blocks.{l}.cross_attn.k_img", dit);  // the CLIP context (model.clip_tokens)
  t.linear("blocks.{l}.attn2.v_img", "blocks.{l}.cross_attn.v_img", dit);
  t.tensor("blocks.{l}.attn2.norm_k_img.weight", "blocks.{l}.cross_attn.norm_k_img.weight", UpstreamLayout::same, dit);
  t.norm("img_emb.ln1", "img_emb.proj.0", dit);
  t.linear("img_emb.fc1", "img_emb.proj.1", dit);
  t.linear("img_emb.fc2", "img_emb.proj.3", dit);
  t.norm("img_emb.ln2", "img_emb.proj.4", dit);
  t.ffn("blocks.{l}.ffn", "blocks.{l}", kWan, dit);
  t.tensor("head.modulation", "head.modulation", UpstreamLayout::squeeze, dit);
  t.linear("head.proj", "head.head", dit);
  for (int i = 1; i <= 3; ++i) t.one_slot(str("action_enc.fc", i), str("action_encoder.W", i), dit);
  t.one_slot("action_dec.fc1", "action_decoder.layer1", dit);
  t.one_slot("action_dec.fc2", "action_decoder.layer2", dit);
  t.one_slot("state_enc.fc1", "state_encoder.layer1", dit);
  t.one_slot("state_enc.fc2", "state_encoder.layer2", dit);
  return t.rules;
}

// `name` against `pattern` with at most one "{l}": the layer's digits, or "" when there is
// none; false when the name does not match.
bool match(const std::string& pattern, const std::string& name, std::string* layer) {
  const size_t at = pattern.find("{l}");
  if (at == std::string::npos) {
    layer->clear();
    return pattern == name;
  }
  const size_t tail = pattern.size() - at - 3;
  if (name.size() <= at + tail || name.compare(0, at, pattern, 0, at) != 0 ||
      name.compare(name.size() - tail, tail, pattern, at + 3, tail) != 0)
    return false;
  *layer = name.substr(at, name.size() - at - tail);
  for (char c : *layer)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return layer->size() == 1 || (*layer)[0] != '0';
}

std::string substitute(const std::string& pattern, const std::string& layer) {
  const size_t at = pattern.find("{l}");
  return at == std::string::npos ? pattern : pattern.substr(0, at) + layer + pattern.substr(at + 3);
}

}  // namespace

const char* upstream_family_name(UpstreamFamily f) {
  return f == UpstreamFamily::gr00t_n15 ? "GR00T-N1.5" : "DreamZero";
}

std::vector<int> upstream_permutation(const UpstreamTensor& t) {
  switch (t.layout) {
    case UpstreamLayout::linear: return {1, 0};
    case UpstreamLayout::patch: return {2, 3, 4, 1, 0};
    case UpstreamLayout::image_patch: return {1, 2, 3, 0};
    case UpstreamLayout::same:
    case UpstreamLayout::squeeze:
    case UpstreamLayout::row: break;
  }
  std::vector<int> identity(t.shape.size());
  for (size_t d = 0; d < identity.size(); ++d) identity[d] = int(d);
  return identity;
}

UpstreamNameMap::UpstreamNameMap(UpstreamFamily family, std::array<int, 3> patch, int image_patch)
    : family_(family),
      patch_(patch),
      image_patch_(image_patch),
      prefix_(family == UpstreamFamily::gr00t_n15 ? "action_head." : "action_head.model."),
      rules_(family == UpstreamFamily::gr00t_n15 ? gr00t_rules() : dreamzero_rules()) {}

bool UpstreamNameMap::is_trained(const std::string& upstream_name) const {
  return upstream_name.compare(0, prefix_.size(), prefix_) == 0;
}

UpstreamTensor UpstreamNameMap::upstream_of(const std::string& ours, const std::vector<int64_t>& s) const {
  std::string layer;
  for (const Rule& r : rules_) {
    if (!match(r.ours, ours, &layer)) continue;
    UpstreamTensor t;
    t.name = (r.under_prefix ? prefix_ : "") + substitute(r.upstream, layer);
    t.layout = r.layout;
    t.group = r.group;
    const std::string where = str("parameter ", quoted_name(ours), " ", shape_string(s), " (upstream ",
                                  quoted_name(t.name), ")");
    switch (r.layout) {
      case UpstreamLayout::same: t.shape = s; break;
      case UpstreamLayout::linear:
        EMB_CHECK(s.size() == 2, where, ": a linear weight must be [in, out]");
        t.shape = {s[1], s[0]};
        break;
      case UpstreamLayout::squeeze:
        t.shape = s;
        t.shape.insert(t.shape.begin(), 1);
        break;
      case UpstreamLayout::patch: {
        const int64_t k = int64_t(patch_[0]) * patch_[1] * patch_[2];
        EMB_CHECK(s.size() == 2 && s[0] % k == 0, where, ": a patch embedding must be [", patch_[0], "·", patch_[1],
                  "·", patch_[2], "·C, D]");
        t.shape = {s[1], s[0] / k, patch_[0], patch_[1], patch_[2]};
        break;
      }
      case UpstreamLayout::row:
        EMB_CHECK(s.size() == 2 && s[0] == 1, where, ": a vector must be [1, n]");
        t.shape = {s[1]};
        break;
      case UpstreamLayout::image_patch: {
        const int64_t k = int64_t(image_patch_) * image_patch_;
        EMB_CHECK(s.size() == 2 && s[0] == 3 * k, where, ": an image patch embedding must be [3·", image_patch_, "·",
                  image_patch_, ", D]");
        t.shape = {s[1], 3, image_patch_, image_patch_};
        break;
      }
    }
    return t;
  }
  throw Error(str("parameter ", quoted_name(ours), " ", shape_string(s), " has no counterpart in ",
                  upstream_family_name(family_), "'s checkpoint (no rule of the upstream name map names it)"));
}

}  // namespace emb
