// experiment_cfg/conf.yaml of a DreamZero export: the released folder's training config, which
// upstream inference reads (dreamzero ab790c1 groot/vla/model/n1_5/sim_policy.py:253-258) and whose
// top-level relative_action and relative_action_keys decide whether it adds the observed state to
// the actions it un-normalises (sim_policy.py:543-607). The export keeps the released file with
// those two keys set to what the run trained (data.relative_action_keys), so inference treats the
// exported actions as the run did; every other line stays as released.
#pragma once
#include <string>
#include <vector>

namespace emb {

constexpr const char* kDreamZeroConfPath = "experiment_cfg/conf.yaml";

// `yaml` (OmegaConf's dump: top-level keys at column 0, list items "- x" below their key) with
// relative_action: true|false and relative_action_keys: the list of `keys` ([] when none); either
// key is appended when the file lacks it.
std::string conf_with_relative_actions(const std::string& yaml, const std::vector<std::string>& keys);

}  // namespace emb
