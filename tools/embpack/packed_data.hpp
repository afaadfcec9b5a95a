// One dataset held in memory in the layout of `embpack/1` (src/data/packed_format.hpp),
// as every converter builds it before write_packed() lays it out on disk.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace emb {

// Varlen token features: rows of `dim` float16 values, offsets [rows+1] into them.
struct VarlenFeatures {
  int64_t dim = 0;
  std::vector<uint16_t> values;
  std::vector<int64_t> offsets{0};
  // String attributes of /features/<name>: what produced the features (embpack features'
  // provenance, packed_format.hpp). Identical on every rank; rank 0 writes them.
  std::map<std::string, std::string> attributes;
};

struct LatentView {
  std::string name;
  int64_t height = 0, width = 0, channels = 0, steps_per_latent = 1;
  std::vector<uint16_t> values;    // [frames, H, W, C] float16
  std::vector<int64_t> offsets{0};  // [E+1] latent frames per episode
  // String attributes of /latents/<name> (the DreamZero layout's, packed_format.hpp); rank 0 writes them.
  std::map<std::string, std::string> attributes;
};

struct VideoView {
  std::string name;
  int64_t height = 0, width = 0;
  std::vector<uint8_t> frames;  // [S, H, W, 3]
};

struct PackedData {
  std::string family;  // gr00t | wan
  double fps = 0;
  std::string source;
  std::string modality;  // JSON of the root `modality` attribute (packed_format.hpp); "" = none
  // /stats/action_relative of these action sub-keys over chunks of this many steps
  // (relative_action_stats.hpp); no keys: none written.
  std::vector<std::string> relative_action_keys;
  int64_t relative_action_chunk = 0;
  std::vector<int64_t> episode_offsets{0};
  std::vector<int32_t> episode_task, episode_embodiment;
  std::vector<int32_t> embodiment_state_dim, embodiment_action_dim;  // optional, one per embodiment
  int64_t state_dim = 0, action_dim = 0;
  std::vector<float> state, action;  // [S, state_dim], [S, action_dim]
  std::vector<float> reward;         // [S] or empty
  std::vector<uint8_t> done;         // [S] or empty
  std::vector<std::string> task_text;
  std::map<std::string, VarlenFeatures> features;  // "vl" (per step) or "txt" (per task)
  std::vector<LatentView> latents;
  std::vector<VideoView> videos;

  int64_t steps() const { return episode_offsets.back(); }
  int64_t episodes() const { return int64_t(episode_offsets.size()) - 1; }
  // Appends episode bounds for `len` more steps (state/action rows are appended by the caller).
  void add_episode(int64_t len, int32_t task, int32_t embodiment);
};

}  // namespace emb
