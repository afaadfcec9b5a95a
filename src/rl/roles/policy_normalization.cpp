#include "rl/roles/policy_normalization.hpp"

#include "core/error.hpp"
#include "data/state_action_normalization.hpp"

namespace emb {

PolicyNormalization::PolicyNormalization(const std::string& recorded, const std::string& checkpoint)
    : recorded_(recorded), path_(checkpoint) {
  if (active()) stats_ = statistics_from_json(nlohmann::json::parse(recorded), checkpoint);
}

void PolicyNormalization::check(int32_t embodiment, int state_dim, int action_dim) const {
  if (!active()) return;
  const auto it = stats_.find(embodiment);
  EMB_CHECK(it != stats_.end(), path_, ": its normalisation statistics have no embodiment ", embodiment,
            " (the run's data did not hold it)");
  EMB_CHECK(int(it->second.state.width()) >= state_dim && int(it->second.action.width()) >= action_dim, path_,
            ": its normalisation statistics of embodiment ", embodiment, " are ", it->second.state.width(), "/",
            it->second.action.width(), " wide, the task's state/action ", state_dim, "/", action_dim);
}

std::vector<float> PolicyNormalization::state(int32_t embodiment, const std::vector<float>& state) const {
  std::vector<float> out = state;
  if (active())
    normalize_rows(normalization_bounds(NormalizationRule::min_max, stats_.at(embodiment).state), out.data(), 1,
                   int64_t(out.size()), int64_t(out.size()));
  return out;
}

void PolicyNormalization::unnormalize_actions(int32_t embodiment, float* rows, int64_t n_rows, int64_t stride,
                                              int64_t width) const {
  if (active())
    unnormalize_rows(normalization_bounds(NormalizationRule::min_max, stats_.at(embodiment).action), rows, n_rows,
                     stride, width);
}

}  // namespace emb
