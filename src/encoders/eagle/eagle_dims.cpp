#include "encoders/eagle/eagle_dims.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"

namespace emb::encoders {

namespace {

using nlohmann::json;

json parse(const std::string& text, const std::string& where) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(str(where, ": not JSON (", e.what(), ")"), kExitInput);
  }
}

// j[key] as T, or a one-line error naming the file and the key path.
template <class T>
T get(const json& j, const char* key, const std::string& where, const std::string& path) {
  if (!j.is_object() || !j.contains(key) || j.at(key).is_null())
    throw Error(str(where, ": missing ", path, key), kExitInput);
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw Error(str(where, ": ", path, key, " has the wrong type (", j.at(key).dump(), ")"), kExitInput);
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(str(path, ": cannot open (the backbone needs it)"), kExitInput);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void expect(bool ok, const std::string& where, const std::string& what) {
  if (!ok) throw Error(str(where, ": ", what), kExitInput);
}

}  // namespace

EagleDims eagle_dims_from_json(const std::string& eagle_config_json, const std::string& where_eagle,
                               const std::string& gr00t_config_json, const std::string& where_gr00t) {
  const json e = parse(eagle_config_json, where_eagle), g = parse(gr00t_config_json, where_gr00t);
  const json& v = e.contains("vision_config") ? e["vision_config"] : json();
  const json& t = e.contains("text_config") ? e["text_config"] : json();
  if (!v.is_object()) throw Error(str(where_eagle, ": missing vision_config"), kExitInput);
  if (!t.is_object()) throw Error(str(where_eagle, ": missing text_config"), kExitInput);
  EagleDims d;
  d.vision_hidden = get<int>(v, "hidden_size", where_eagle, "vision_config.");
  d.vision_intermediate = get<int>(v, "intermediate_size", where_eagle, "vision_config.");
  d.vision_heads = get<int>(v, "num_attention_heads", where_eagle, "vision_config.");
  d.vision_layers = get<int>(v, "num_hidden_layers", where_eagle, "vision_config.");
  d.patch = get<int>(v, "patch_size", where_eagle, "vision_config.");
  d.image_size = e.contains("force_image_size") && !e["force_image_size"].is_null()
                     ? get<int>(e, "force_image_size", where_eagle, "")
                     : get<int>(v, "image_size", where_eagle, "vision_config.");
  d.vision_eps = get<float>(v, "layer_norm_eps", where_eagle, "vision_config.");
  d.llm_hidden = get<int>(t, "hidden_size", where_eagle, "text_config.");
  d.llm_intermediate = get<int>(t, "intermediate_size", where_eagle, "text_config.");
  d.llm_heads = get<int>(t, "num_attention_heads", where_eagle, "text_config.");
  d.llm_kv_heads = get<int>(t, "num_key_value_heads", where_eagle, "text_config.");
  d.head_dim = t.contains("head_dim") && !t["head_dim"].is_null() ? get<int>(t, "head_dim", where_eagle, "text_config.")
                                                                  : d.llm_hidden / std::max(d.llm_heads, 1);
  d.rms_eps = get<float>(t, "rms_norm_eps", where_eagle, "text_config.");
  d.rope_theta = get<float>(t, "rope_theta", where_eagle, "text_config.");
  d.vocab = get<int64_t>(t, "vocab_size", where_eagle, "text_config.");
  d.image_token_index = get<int32_t>(e, "image_token_index", where_eagle, "");
  const int llm_layers = get<int>(t, "num_hidden_layers", where_eagle, "text_config.");
  const std::string vision_act = v.value("hidden_act", std::string("gelu_pytorch_tanh"));
  const std::string text_act = t.value("hidden_act", std::string("silu"));

  // What GR00T-N1.5's backbone computes and embtrain implements (spec_eagle.md §3–6).
  expect(!e.value("use_pixel_shuffle", false), where_eagle,
         "use_pixel_shuffle = true is not implemented (GR00T-N1.5's Eagle has none)");
  expect(e.value("mlp_connector_layers", 1) == 1, where_eagle,
         "mlp_connector_layers must be 1 (mlp1 = one Linear, as GR00T-N1.5)");
  expect(e.value("select_layer", -1) == -1, where_eagle,
         "select_layer (the vision layer) must be -1: features after post_layernorm");
  expect(vision_act == "gelu_pytorch_tanh", where_eagle, str("vision_config.hidden_act ", vision_act,
                                                             " is not implemented (gelu_pytorch_tanh)"));
  expect(text_act == "silu", where_eagle, str("text_config.hidden_act ", text_act, " is not implemented (silu)"));
  expect(!t.value("attention_bias", false), where_eagle, "text_config.attention_bias = true is not implemented");
  expect(!t.contains("rope_scaling") || t["rope_scaling"].is_null(), where_eagle,
         "text_config.rope_scaling is not implemented (GR00T-N1.5's Qwen3 has none)");
  expect(d.rms_eps == 1e-6f, where_eagle,
         str("text_config.rms_norm_eps ", d.rms_eps, ": the RMSNorm op implements eps 1e-6 (GR00T-N1.5's)"));
  expect(d.vision_heads > 0 && d.vision_hidden % d.vision_heads == 0, where_eagle,
         "vision_config.hidden_size must be a multiple of num_attention_heads");
  expect(d.llm_heads > 0 && d.llm_kv_heads > 0 && d.llm_heads % d.llm_kv_heads == 0 && d.head_dim % 2 == 0,
         where_eagle, "text_config: num_attention_heads must be a multiple of num_key_value_heads, head_dim even");
  expect(d.patch > 0 && d.image_size % d.patch == 0, where_eagle, "the image size must be a multiple of patch_size");
  expect(d.image_token_index >= 0 && d.image_token_index < d.vocab, where_eagle,
         str("image_token_index ", d.image_token_index, " is outside the vocabulary of ", d.vocab));

  if (!g.contains("backbone_cfg") || !g["backbone_cfg"].is_object())
    throw Error(str(where_gr00t, ": missing backbone_cfg (GR00T-N1.5's config.json)"), kExitInput);
  d.select_layer = get<int>(g["backbone_cfg"], "select_layer", where_gr00t, "backbone_cfg.");
  expect(d.select_layer >= 1 && d.select_layer <= llm_layers, where_gr00t,
         str("backbone_cfg.select_layer ", d.select_layer, " must count the LLM layers kept: 1 to ", llm_layers,
             " (GR00T pops layers while there are more)"));
  // The action head reads the features at their width: its backbone_embedding_dim (when the
  // config carries the head's settings) must be the LLM's hidden size.
  if (g.contains("action_head_cfg") && g["action_head_cfg"].is_object() &&
      g["action_head_cfg"].contains("backbone_embedding_dim")) {
    const int64_t head = get<int64_t>(g["action_head_cfg"], "backbone_embedding_dim", where_gr00t, "action_head_cfg.");
    expect(head == d.llm_hidden, where_gr00t,
           str("action_head_cfg.backbone_embedding_dim ", head, " disagrees with the backbone's width ", d.llm_hidden,
               " (", where_eagle, " text_config.hidden_size)"));
  }
  const json& b = g["backbone_cfg"];
  expect(!b.contains("project_to_dim") || b["project_to_dim"].is_null(), where_gr00t,
         "backbone_cfg.project_to_dim is not implemented (GR00T-N1.5 ships null: no projection)");
  return d;
}

EagleDims read_eagle_dims(const std::string& eagle_folder, const std::string& checkpoint) {
  const std::string eagle = eagle_folder + "/config.json", gr00t = checkpoint + "/config.json";
  return eagle_dims_from_json(read_text(eagle), eagle, read_text(gr00t), gr00t);
}

std::string describe(const EagleDims& d) {
  return str("vision ", d.vision_hidden, " x ", d.vision_layers, " layers (", d.vision_heads, " heads), LLM ",
             d.llm_hidden, " x ", d.select_layer, " layers (", d.llm_heads, "/", d.llm_kv_heads, " heads of ",
             d.head_dim, "), vocab ", d.vocab);
}

}  // namespace emb::encoders
