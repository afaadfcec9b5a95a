#include "weights/upstream_config.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "weights/strict_json.hpp"

namespace emb {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// CausalWanModel's CLIP context: the rows of one image (clip_xlm_roberta_vit_h_14, 16x16 patches
// of 224x224 plus the class token), fixed by the model, not by config.json.
constexpr int kUpstreamClipTokens = 257;

// One JSON object of the file and its dotted path, for reading keys with defaults.
struct Section {
  const std::string& file;
  const json& object;
  std::string path;

  std::string at(const std::string& key) const { return path.empty() ? key : path + "." + key; }
  bool has(const std::string& key) const { return object.contains(key) && !object[key].is_null(); }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(str(file, ": ", at(key), ": ", what), kExitInput);
  }

  Section sub(const std::string& key) const {
    if (!object.contains(key) || !object[key].is_object()) fail(key, "expected an object");
    return {file, object[key], at(key)};
  }
  // A number, or `fallback` when absent or null (upstream's constructor default); required
  // keys pass no fallback.
  double number(const std::string& key, const double* fallback = nullptr) const {
    if (!has(key)) {
      if (!fallback) fail(key, "missing (upstream has no default for it)");
      return *fallback;
    }
    if (!object[key].is_number()) fail(key, str("expected a number, got ", clipped(object[key].dump())));
    return object[key].get<double>();
  }
  int64_t size(const std::string& key, int64_t fallback = -1) const {
    const double f = double(fallback);
    const double v = number(key, fallback >= 0 ? &f : nullptr);
    if (v != double(int64_t(v)) || v <= 0 || v > 2147483647.0) fail(key, str("expected a positive integer, got ", v));
    return int64_t(v);
  }
  bool flag(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!object[key].is_boolean()) fail(key, str("expected true or false, got ", clipped(object[key].dump())));
    return object[key].get<bool>();
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!object[key].is_string()) fail(key, str("expected a string, got ", clipped(object[key].dump())));
    return object[key].get<std::string>();
  }
  // A key embtrain implements at one value only: anything else is refused.
  template <class T>
  void require(const std::string& key, const T& value, const T& expected, const std::string& why) const {
    if (value != expected) fail(key, why);
  }
};

// The DiT's and the vision-language transformer's blocks as released: no positional embedding
// inside the blocks (null: absent means upstream's "sinusoidal") and the final dropout.
void require_released_blocks(const Section& s) {
  if (s.has("positional_embeddings") || !s.object.contains("positional_embeddings"))
    s.fail("positional_embeddings", "embtrain implements the released blocks without positional embeddings (null; "
                                    "absent means upstream's \"sinusoidal\")");
  s.require("final_dropout", s.flag("final_dropout", true), true,
            "embtrain implements the released blocks with their final dropout (true)");
}

struct DimList {
  std::vector<UpstreamDim> dims;
  void add(const std::string& key, double value, const std::string& source) { dims.push_back({key, value, source}); }
};

// GR00T-N1.5 (spec_gr00t_n15.md "config.json -> dimensions"; defaults: FlowmatchingActionHeadConfig
// and the DiT / SelfAttentionTransformer constructors).
void read_gr00t(const Section& root, DimList& d) {
  const Section ah = root.sub("action_head_cfg");
  const Section dit = ah.sub("diffusion_model_cfg");
  const int64_t D = ah.size("input_embedding_dim", 1536), Dvl = ah.size("backbone_embedding_dim", 1536);
  const int64_t heads = dit.size("num_attention_heads", 8), hd = dit.size("attention_head_dim", 64);
  if (heads * hd != D)
    dit.fail("num_attention_heads",
             str(heads, " heads x attention_head_dim ", hd, " = ", heads * hd, " but ", ah.at("input_embedding_dim"),
                 " = ", D, ": upstream's DiT width must equal the action head's embedding width"));
  const int64_t Dh = ah.size("hidden_size", 1024), Dout = dit.size("output_dim", 26);
  if (Dout != Dh)
    dit.fail("output_dim", str(Dout, " but ", ah.at("hidden_size"), " = ", Dh,
                               ": upstream's action decoder reads hidden_size features from the DiT output"));
  const int64_t Dcross = dit.size("cross_attention_dim", Dvl);
  if (Dcross != Dvl)
    dit.fail("cross_attention_dim", str(Dcross, " but ", ah.at("backbone_embedding_dim"), " = ", Dvl,
                                        ": the DiT attends to the vision-language features"));
  dit.require("interleave_self_attention", dit.flag("interleave_self_attention", false), true,
              "embtrain implements the released DiT: even layers cross-attention, odd layers self-attention (true)");
  dit.require("norm_type", dit.text("norm_type", "ada_norm"), std::string("ada_norm"),
              "embtrain implements the released DiT's ada_norm only");
  require_released_blocks(dit);
  ah.require("use_vlln", ah.flag("use_vlln", true), true,
             "embtrain implements the released head with vlln and the vision-language blocks (true)");
  ah.require("add_pos_embed", ah.flag("add_pos_embed", true), true,
             "embtrain implements the released head with its position table (true)");
  d.add("d_model", double(D), ah.at("input_embedding_dim"));
  d.add("n_heads", double(heads), dit.at("num_attention_heads"));
  d.add("n_layers", double(dit.size("num_layers", 12)), dit.at("num_layers"));
  d.add("d_ff", double(4 * D), "(derived: 4 x input_embedding_dim, diffusers' FeedForward)");
  d.add("d_out", double(Dout), dit.at("output_dim"));
  d.add("d_ctx", double(Dvl), ah.at("backbone_embedding_dim"));
  d.add("d_hidden_enc", double(Dh), ah.at("hidden_size"));
  d.add("action_dim", double(ah.size("action_dim")), ah.at("action_dim"));
  d.add("horizon", double(ah.size("action_horizon")), ah.at("action_horizon"));
  d.add("state_dim", double(ah.size("max_state_dim")), ah.at("max_state_dim"));
  d.add("n_future", double(ah.size("num_target_vision_tokens", 32)), ah.at("num_target_vision_tokens"));
  d.add("n_embodiments", double(ah.size("max_num_embodiments", 32)), ah.at("max_num_embodiments"));
  d.add("max_seq_len", double(ah.size("max_seq_len", 1024)), ah.at("max_seq_len"));
  const double default_dropout = 0.1;
  d.add("dropout", dit.number("dropout", &default_dropout), dit.at("dropout"));
  const Section vl = ah.sub("vl_self_attention_cfg");
  require_released_blocks(vl);
  const int64_t vl_heads = vl.size("num_attention_heads", 8), vl_hd = vl.size("attention_head_dim", 64);
  if (vl_heads * vl_hd != Dvl)
    vl.fail("num_attention_heads", str(vl_heads, " heads x attention_head_dim ", vl_hd, " = ", vl_heads * vl_hd,
                                       " but ", ah.at("backbone_embedding_dim"), " = ", Dvl));
  d.add("n_layers_vl", double(vl.size("num_layers", 12)), vl.at("num_layers"));
  d.add("n_heads_vl", double(vl_heads), vl.at("num_attention_heads"));
  d.add("dropout_vl", vl.number("dropout", &default_dropout), vl.at("dropout"));
}

// DreamZero (spec_dreamzero.md "config.json -> dimensions"; absent keys: CausalWanModel's
// defaults, wan_video_dit_action_casual_chunk.py 1266-1293).
void read_dreamzero(const Section& root, DimList& d, std::array<int, 3>& patch) {
  const Section cfg = root.sub("action_head_cfg").sub("config");
  const Section m = cfg.sub("diffusion_model_cfg");
  const int64_t D = m.size("dim", 2048), heads = m.size("num_heads", 16);
  if (D % heads != 0) m.fail("num_heads", str(heads, " does not divide dim = ", D));
  if (m.has("patch_size")) {
    const json& p = m.object["patch_size"];
    if (!p.is_array() || p.size() != 3) m.fail("patch_size", "expected [pt, ph, pw]");
    for (size_t i = 0; i < 3; ++i) {
      if (!p[i].is_number_integer() || p[i].get<int64_t>() <= 0) m.fail("patch_size", "expected positive integers");
      patch[i] = p[i].get<int>();
    }
  }
  d.add("d_model", double(D), m.at("dim"));
  d.add("n_heads", double(heads), m.at("num_heads"));
  d.add("n_layers", double(m.size("num_layers", 32)), m.at("num_layers"));
  d.add("d_ff", double(m.size("ffn_dim", 8192)), m.at("ffn_dim"));
  d.add("d_ctx", double(m.size("text_dim", 4096)), m.at("text_dim"));
  // in_dim = the noised latents (out_dim) + the I2V y channels concatenated to them.
  const int64_t in_dim = m.size("in_dim", 16), out_dim = m.size("out_dim", 16);
  if (in_dim < out_dim) m.fail("in_dim", str(in_dim, " < out_dim = ", out_dim, " (in_dim is the latents plus the I2V y)"));
  d.add("latent_channels", double(out_dim), m.at("out_dim"));
  d.add("out_channels", double(out_dim), m.at("out_dim"));
  d.add("cond_channels", double(in_dim - out_dim), "(derived: " + m.at("in_dim") + " - " + m.at("out_dim") + ")");
  // i2v and ti2v build img_emb and the image cross-attention: upstream's 257 CLIP rows.
  const std::string type = m.text("model_type", "t2v");
  if (type != "t2v" && type != "i2v" && type != "ti2v") m.fail("model_type", str("'", type, "', expected t2v, i2v or ti2v"));
  d.add("clip_tokens", type == "t2v" ? 0.0 : double(kUpstreamClipTokens), m.at("model_type"));
  d.add("action_dim", double(m.size("action_dim", 32)), m.at("action_dim"));
  d.add("frames_per_block", double(m.size("num_frame_per_block", 1)), m.at("num_frame_per_block"));
  d.add("actions_per_block", double(m.size("num_action_per_block", 32)), m.at("num_action_per_block"));
  d.add("state_dim", double(m.size("max_state_dim", 64)), m.at("max_state_dim"));
  d.add("d_hidden_enc", double(m.size("hidden_size", 1024)), m.at("hidden_size"));
}

}  // namespace

const UpstreamDim* UpstreamConfig::find(const std::string& key) const {
  for (const UpstreamDim& d : dims)
    if (d.key == key) return &d;
  return nullptr;
}

std::string checkpoint_folder_of(const std::string& init_from) {
  const fs::path p(init_from);
  return (fs::is_directory(p) ? p : p.parent_path()).string();
}

std::string config_json_of(const std::string& init_from) {
  return (fs::path(checkpoint_folder_of(init_from)) / "config.json").string();
}

UpstreamConfig read_upstream_config(const std::string& config_path) {
  EMB_CHECK(fs::is_regular_file(config_path), config_path,
            ": no such file (train.init_from needs the checkpoint's config.json: in the folder, or beside the "
            ".safetensors file)");
  std::ifstream in(config_path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EMB_CHECK(in.good() || in.eof(), config_path, ": cannot read");
  UpstreamConfig c;
  c.path = config_path;
  c.json = parse_json_strict(text.str(), config_path);
  EMB_CHECK(c.json.is_object(), config_path, ": not a JSON object");
  const Section root{config_path, c.json, ""};
  const json* ah = c.json.contains("action_head_cfg") ? &c.json["action_head_cfg"] : nullptr;
  DimList dims;
  if (ah && ah->is_object() && ah->contains("diffusion_model_cfg")) {
    c.family = UpstreamFamily::gr00t_n15;
    read_gr00t(root, dims);
  } else if (ah && ah->is_object() && ah->contains("config") && (*ah)["config"].is_object() &&
             (*ah)["config"].contains("diffusion_model_cfg")) {
    c.family = UpstreamFamily::dreamzero;
    read_dreamzero(root, dims, c.patch);
  } else {
    throw Error(str(config_path, ": neither a GR00T-N1.5 config (action_head_cfg.diffusion_model_cfg) nor a "
                                 "DreamZero one (action_head_cfg.config.diffusion_model_cfg)"),
                kExitInput);
  }
  c.dims = std::move(dims.dims);
  return c;
}

}  // namespace emb
