// The raw frames of a DreamZero clip (DATA.md "DreamZero layout"): the clip of step s has
// T = 1 + 4·(F − 1) frames for F latent frames (the VAE's causal chunking: frame 0 alone, then
// 4 frames per latent frame), frame k taken at step s + k·stride, the episode's last frame
// repeated past its end. `embpack features --dreamzero` and the loader of model.encoders = online
// take a clip's frames by these rules, so both encode the same pictures.
#pragma once
#include <algorithm>
#include <cstdint>

namespace emb {

inline int clip_raw_frames(int latent_frames) { return 1 + 4 * (latent_frames - 1); }

// The step of frame k of the clip starting at step `first` in an episode ending before `episode_end`.
inline int64_t clip_frame_step(int64_t first, int k, int64_t stride, int64_t episode_end) {
  return std::min(first + int64_t(k) * stride, episode_end - 1);
}

}  // namespace emb
