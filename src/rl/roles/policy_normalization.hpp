// The normalisation a gr00t checkpoint's policy acts under (embsim eval's Gr00tPolicy, embsim rl's
// simulators): the statistics the run trained with (the checkpoint's `normalization` attribute,
// data/normalization_statistics.hpp), applied as the trainer's loader did
// (data/state_action_normalization.hpp, GR00T's min_max): the observed state is normalised before
// the model sees it, the sampled actions are un-normalised before the environment executes them,
// as upstream's Gr00tPolicy does (Isaac-GR00T 4af2b622 gr00t/model/policy.py:121-144,
// apply_transforms and unapply_transforms), per sub-key where the run had per-key transforms
// (data.upstream_config, data.state_encoding = sin_cos). A checkpoint without the attribute
// (data.normalize = none, or older) acts on raw values.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/relative_actions.hpp"
#include "data/state_action_normalization.hpp"

namespace emb {

class PolicyNormalization {
 public:
  PolicyNormalization() = default;
  // `recorded`: the checkpoint's attribute ("" = none), `checkpoint` its path (named in errors).
  PolicyNormalization(const std::string& recorded, const std::string& checkpoint);
  bool active() const { return !recorded_.empty(); }
  const std::string& recorded() const { return recorded_; }  // what an RL checkpoint records again
  // Throws emb::Error naming the checkpoint when its statistics lack `embodiment` or are narrower
  // than the task's widths.
  void check(int32_t embodiment, int state_dim, int action_dim) const;
  // `state` (the task's width) as the model saw states in training: normalised, or by its per-key
  // transforms over state_width columns.
  std::vector<float> state(int32_t embodiment, const std::vector<float>& state) const;
  // The width of state(embodiment, a state of task_state_dim).
  int state_width(int32_t embodiment, int task_state_dim) const;
  // Rows of `stride` floats of model-space actions, their first `width` columns to the task's
  // (per-key transforms: each key inverted into its own columns).
  void unnormalize_actions(int32_t embodiment, float* rows, int64_t n_rows, int64_t stride, int64_t width) const;
  // Un-normalised rows of an embodiment trained on relative actions (the record's relative_action,
  // data/relative_actions.hpp) made absolute: the observed raw `state` (the task's width) added to
  // the relative columns, as upstream's policy adds the last observed state (dreamzero ab790c1
  // groot/vla/model/n1_5/sim_policy.py:537-607); unchanged without relative actions.
  void add_observed_state(int32_t embodiment, const std::vector<float>& state, float* rows, int64_t n_rows,
                          int64_t stride) const;

 private:
  std::string recorded_, path_;
  // Per embodiment, the min_max bounds of its state and its actions and its per-key transforms,
  // built once from the recorded statistics (not per observation).
  NormalizationBoundsMap bounds_;
  std::map<int32_t, RelativeActions> relative_;  // the embodiments trained on relative actions
};

}  // namespace emb
