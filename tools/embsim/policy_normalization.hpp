// The normalisation a gr00t checkpoint's policy acts under: the statistics the run trained with
// (the checkpoint's `normalization` attribute, data/normalization_statistics.hpp), applied as the
// trainer's loader did (data/state_action_normalization.hpp, GR00T's min_max): the observed state
// is normalised before the model sees it, the sampled actions are un-normalised before the
// environment executes them, as upstream's Gr00tPolicy does (Isaac-GR00T 4af2b622
// gr00t/model/policy.py: apply_transforms, unapply_transforms). A checkpoint without the
// attribute (data.normalize = none, or older) acts on raw values.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/normalization_statistics.hpp"

namespace emb {

class PolicyNormalization {
 public:
  PolicyNormalization() = default;
  explicit PolicyNormalization(const std::string& checkpoint);
  bool active() const { return active_; }
  // Throws emb::Error naming the checkpoint when its statistics lack `embodiment` or are narrower
  // than the task's widths.
  void check(int32_t embodiment, int state_dim, int action_dim) const;
  // `state` (the task's width) as the model saw states in training.
  std::vector<float> state(int32_t embodiment, const std::vector<float>& state) const;
  // Rows of `stride` floats of model-space actions, their first `width` columns to the task's.
  void unnormalize_actions(int32_t embodiment, float* rows, int64_t n_rows, int64_t stride, int64_t width) const;

 private:
  std::string path_;
  bool active_ = false;
  NormalizationStatistics stats_;
};

}  // namespace emb
