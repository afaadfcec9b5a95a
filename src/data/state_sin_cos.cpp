#include "data/state_sin_cos.hpp"

namespace emb {

KeyTransformPlan state_sin_cos_plan(const std::vector<ModalitySubKey>& state_keys) {
  KeyTransformPlan plan;
  plan.selected_by = kStateSinCosSelection;
  for (const ModalitySubKey& k : state_keys) {
    KeyTransform t;
    t.key = k.name, t.start = k.start, t.width = k.end - k.start, t.sin_cos = true;
    plan.state.push_back(t);
  }
  return plan;
}

}  // namespace emb
