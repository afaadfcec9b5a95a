#include "rl/roles/policy_normalization.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace emb {

PolicyNormalization::PolicyNormalization(const std::string& recorded, const std::string& checkpoint)
    : recorded_(recorded), path_(checkpoint) {
  if (!active()) return;
  const NormalizationStatistics stats = statistics_from_json(nlohmann::json::parse(recorded), checkpoint);
  bounds_ = normalization_bounds(NormalizationRule::min_max, stats);
  for (const auto& [embodiment, s] : stats)
    if (!s.relative_action.empty()) relative_[embodiment] = s.relative_action;
}

void PolicyNormalization::check(int32_t embodiment, int state_dim, int action_dim) const {
  if (!active()) return;
  const auto it = bounds_.find(embodiment);
  EMB_CHECK(it != bounds_.end(), path_, ": its normalisation statistics have no embodiment ", embodiment,
            " (the run's data did not hold it)");
  const size_t state_width = it->second.state.low.size(), action_width = it->second.action.low.size();
  EMB_CHECK(int(state_width) >= state_dim && int(action_width) >= action_dim, path_,
            ": its normalisation statistics of embodiment ", embodiment, " are ", state_width, "/", action_width,
            " wide, the task's state/action ", state_dim, "/", action_dim);
  EMB_CHECK(it->second.state_keys.empty() || int(state_width) == state_dim, path_, ": embodiment ", embodiment,
            " trained on per-key transformed states of ", state_width, " columns; the task's state is ", state_dim);
  EMB_CHECK(it->second.action_keys.empty() || int(action_width) == action_dim, path_, ": embodiment ", embodiment,
            " trained on per-key transformed actions of ", action_width, " columns; the task's action is ", action_dim);
}

std::vector<float> PolicyNormalization::state(int32_t embodiment, const std::vector<float>& state) const {
  std::vector<float> out = state;
  if (!active()) return out;
  // Transformed in place: room for the raw state and for what the model sees (per-key transforms
  // may widen it, or drop keys the config does not take).
  const size_t width = size_t(state_width(embodiment, int(state.size())));
  out.resize(std::max(width, state.size()), 0.f);
  normalize_state_rows(bounds_.at(embodiment), out.data(), 1, int64_t(out.size()), int64_t(state.size()));
  out.resize(width);
  return out;
}

int PolicyNormalization::state_width(int32_t embodiment, int task_state_dim) const {
  return active() ? int(model_state_width(bounds_.at(embodiment), task_state_dim)) : task_state_dim;
}

void PolicyNormalization::unnormalize_actions(int32_t embodiment, float* rows, int64_t n_rows, int64_t stride,
                                              int64_t width) const {
  if (active())
    unnormalize_action_rows(bounds_.at(embodiment), rows, n_rows, stride, width);
}

void PolicyNormalization::add_observed_state(int32_t embodiment, const std::vector<float>& state, float* rows,
                                             int64_t n_rows, int64_t stride) const {
  const auto it = relative_.find(embodiment);
  if (it == relative_.end()) return;
  for (const RelativeColumns& c : it->second)
    EMB_CHECK(c.state_start + c.width <= int64_t(state.size()) && c.action_start + c.width <= stride, path_,
              ": relative action key ", c.key, " lies outside the task's state/action widths ", state.size(), "/", stride);
  add_anchor_state(it->second, state.data(), rows, n_rows, stride);
}

}  // namespace emb
