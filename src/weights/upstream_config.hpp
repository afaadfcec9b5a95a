// The config.json of a released checkpoint, read for what a run needs of it: which family
// it is and the model's dimensions under our [model] key names, each with the JSON path it
// came from so that a disagreement with the deck names both. GR00T-N1.5's layout is
// {"action_head_cfg": {..., "diffusion_model_cfg": {...}, "vl_self_attention_cfg": {...}},
// "backbone_cfg": {...}}; DreamZero's {"action_head_cfg": {"config": {...,
// "diffusion_model_cfg": {...}}}} (spec_gr00t_n15.md / spec_dreamzero.md config tables). Keys
// absent from the file take the upstream constructors' defaults, as upstream does. A value
// upstream could not build (a broken tie such as heads × head_dim ≠ width) or a structure
// embtrain does not implement (use_vlln false, another norm_type) is one line naming the key.
#pragma once
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "weights/upstream_map.hpp"

namespace emb {

struct UpstreamDim {
  std::string key;     // our [model] key without the section: "d_model"
  double value = 0;    // sizes are integers; dropout probabilities are not
  std::string source;  // "action_head_cfg.input_embedding_dim", or "(derived: ...)"
};

struct UpstreamConfig {
  std::string path;  // the config.json read
  UpstreamFamily family = UpstreamFamily::gr00t_n15;
  std::vector<UpstreamDim> dims;
  std::array<int, 3> patch = {1, 2, 2};  // DreamZero's patch_size
  nlohmann::json json;                   // the whole file, as read

  const UpstreamDim* find(const std::string& key) const;
};

// The folder of a released checkpoint `init_from` (train.init_from): the path itself for a
// checkpoint folder, the folder holding a single .safetensors file. Other files a consumer
// needs beside the weights (the online Eagle backbone's configuration) are read from there.
std::string checkpoint_folder_of(const std::string& init_from);
// The config.json that describes `init_from`: checkpoint_folder_of(init_from)/config.json.
std::string config_json_of(const std::string& init_from);

// Throws emb::Error in one line naming the file and key.
UpstreamConfig read_upstream_config(const std::string& config_path);

}  // namespace emb
