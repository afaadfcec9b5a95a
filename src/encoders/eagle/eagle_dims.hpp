// The dimensions of GR00T-N1.5's Eagle 2.5 backbone and where they come from. Upstream builds the
// backbone from its package's eagle2_hg_model/config.json (eagle_backbone.py 50), not from the
// checkpoint, and keeps the first `backbone_cfg.select_layer` LLM layers (GR00T's config.json);
// so do we: the Eagle folder (config.json beside the Qwen tokenizer files) and the GR00T
// checkpoint folder. Every tensor the backbone reads is then checked against these dimensions
// (eagle_weights.hpp), so a checkpoint of other sizes fails at load with one line.
#pragma once
#include <cstdint>
#include <string>

namespace emb::encoders {

struct EagleDims {
  // SigLIP vision tower (vision_config)
  int vision_hidden = 1152, vision_intermediate = 4304, vision_heads = 16, vision_layers = 27;
  int patch = 14, image_size = 224;
  float vision_eps = 1e-6f;
  // Qwen3 (text_config), the first select_layer layers
  int llm_hidden = 2048, llm_intermediate = 6144, llm_heads = 16, llm_kv_heads = 8, head_dim = 128;
  float rms_eps = 1e-6f, rope_theta = 1e6f;
  int64_t vocab = 151680;
  int32_t image_token_index = 151669;
  int select_layer = 12;

  int tokens_per_image() const { return (image_size / patch) * (image_size / patch); }
  int patch_features() const { return 3 * patch * patch; }  // a patch row, (channel, y, x) order
  int vision_head_dim() const { return vision_hidden / vision_heads; }
};

// eagle_config_json: the text of eagle2_hg_model/config.json; gr00t_config_json: GR00T's
// config.json (backbone_cfg.select_layer). `where_*` name the files in errors. Throws emb::Error
// (exit 2) in one line naming the file and key on a missing key or a configuration the backbone
// does not implement (pixel shuffle, an MLP connector of more than one layer, a vision
// select_layer other than -1, an RMSNorm eps other than 1e-6: the op's fixed eps).
EagleDims eagle_dims_from_json(const std::string& eagle_config_json, const std::string& where_eagle,
                               const std::string& gr00t_config_json, const std::string& where_gr00t);

// The same from the files: EAGLE_FOLDER/config.json and CHECKPOINT/config.json.
EagleDims read_eagle_dims(const std::string& eagle_folder, const std::string& checkpoint);

// "vision 1152 x 27 layers (16 heads), LLM 2048 x 12 layers (16/8 heads of 128), vocab 151680":
// for logs and the provenance of features.
std::string describe(const EagleDims& d);

}  // namespace emb::encoders
