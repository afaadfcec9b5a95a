#include "packed_reader.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"
#include "data/packed_verify.hpp"
#include "relative_action_stats.hpp"

namespace emb {

namespace {

// Rows [first, last) of a table whose rows are `width` elements of T.
template <class T>
std::vector<T> read_rows(const H5File& f, const std::string& ds, int64_t first, int64_t last, int64_t width) {
  std::vector<T> out(size_t((last - first) * width));
  if (last == first) return out;
  RowRanges rows;
  rows.add(first, last);
  rows.finish();
  f.read_rows(ds, elem_of<T>(), rows, out.data());
  return out;
}

int64_t row_width(const std::vector<int64_t>& dims) {
  int64_t w = 1;
  for (size_t i = 1; i < dims.size(); ++i) w *= dims[i];
  return w;
}

}  // namespace

PackedData read_packed_share(const std::string& path, const PackedShareRequest& request) {
  const H5File f = H5File::open(path);
  const PackedSummary s = verify_structure(f);
  PackedData p;
  p.family = s.family, p.fps = s.fps, p.source = s.source;
  if (f.has_attr("/", packed::kModality)) p.modality = f.attr_string("/", packed::kModality);
  read_relative_action_request(f, p);
  p.state_dim = s.state_dim, p.action_dim = s.action_dim;
  const std::vector<int64_t> offsets = f.read_all<int64_t>(packed::kEpisodeOffsets);
  const int64_t e0 = request.first_episode, e1 = request.last_episode < 0 ? s.episodes : request.last_episode;
  EMB_ASSERT(e0 >= 0 && e0 <= e1 && e1 <= s.episodes);
  const int64_t s0 = offsets[size_t(e0)], s1 = offsets[size_t(e1)];
  const std::vector<int32_t> task = f.read_all<int32_t>(packed::kEpisodeTask);
  const std::vector<int32_t> embodiment = f.read_all<int32_t>(packed::kEpisodeEmbodiment);
  for (int64_t e = e0; e < e1; ++e)
    p.add_episode(offsets[size_t(e + 1)] - offsets[size_t(e)], task[size_t(e)], embodiment[size_t(e)]);
  p.task_text = f.read_strings(packed::kTaskText);
  if (s.embodiments > 0) {
    p.embodiment_state_dim = f.read_all<int32_t>(packed::kEmbodimentStateDim);
    p.embodiment_action_dim = f.read_all<int32_t>(packed::kEmbodimentActionDim);
  }
  p.state = read_rows<float>(f, packed::kState, s0, s1, s.state_dim);
  p.action = read_rows<float>(f, packed::kAction, s0, s1, s.action_dim);
  if (f.has(packed::kReward)) p.reward = read_rows<float>(f, packed::kReward, s0, s1, 1);
  if (f.has(packed::kDone)) p.done = read_rows<uint8_t>(f, packed::kDone, s0, s1, 1);
  if (request.videos)
    for (const std::string& view : s.video_views) {
      const std::string ds = str(packed::kVideo, "/", view);
      const std::vector<int64_t> d = f.dims(ds);
      VideoView v;
      v.name = view, v.height = d[1], v.width = d[2];
      v.frames = read_rows<uint8_t>(f, ds, s0, s1, row_width(d));
      p.videos.push_back(std::move(v));
    }
  if (request.features)
    for (const std::string& name : s.features) {
      const std::string ds = str("/features/", name);
      const std::vector<int64_t> feature_offsets = f.read_all<int64_t>(ds + "_offsets");
      // Per-step features (gr00t vl) follow the steps; per-task ones (wan txt) are whole.
      const bool per_step = int64_t(feature_offsets.size()) == s.steps + 1;
      const int64_t r0 = per_step ? s0 : 0, r1 = per_step ? s1 : int64_t(feature_offsets.size()) - 1;
      VarlenFeatures v;
      v.dim = f.dims(ds)[1];
      v.offsets.clear();
      for (int64_t r = r0; r <= r1; ++r) v.offsets.push_back(feature_offsets[size_t(r)] - feature_offsets[size_t(r0)]);
      v.values = read_rows<uint16_t>(f, ds, feature_offsets[size_t(r0)], feature_offsets[size_t(r1)], v.dim);
      for (const char* key : packed::kFeatureProvenance)
        if (f.has_attr(ds, key)) v.attributes[key] = f.attr_string(ds, key);
      if (f.has_attr(ds, "augment_seed")) v.attributes["augment_seed"] = f.attr_string(ds, "augment_seed");
      p.features[name] = std::move(v);
    }
  EMB_CHECK(s.latent_views.empty(), path, ": ", packed::kLatents, ": latents are not carried over by this reader");
  return p;
}

std::vector<int64_t> balanced_episode_shares(const std::vector<int64_t>& episode_offsets, int ranks) {
  const int64_t E = int64_t(episode_offsets.size()) - 1, S = episode_offsets.back();
  std::vector<int64_t> bounds = {0};
  for (int r = 1; r < ranks; ++r) {
    // The first episode starting at or after the r-th fraction of the steps.
    const int64_t target = S * r / ranks;
    const int64_t e = int64_t(std::lower_bound(episode_offsets.begin(), episode_offsets.end(), target) -
                              episode_offsets.begin());
    bounds.push_back(std::clamp(e, bounds.back(), E));
  }
  bounds.push_back(E);
  return bounds;
}

}  // namespace emb
