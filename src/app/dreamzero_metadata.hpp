// experiment_cfg/metadata.json of a DreamZero export. Upstream inference reads it as GR00T's does
// ({embodiment tag: DatasetMetadata}, dreamzero ab790c1 groot/vla/model/n1_5/sim_policy.py:356-365,
// written by groot/vla/experiment/base.py:665-679): the statistics it normalises states and
// un-normalises actions with, under the tag it is launched with. DreamZero serves one embodiment
// (max_num_embodiments = 1), so the released file holds that embodiment's entry, with the
// release's training data's statistics; a run fine-tuned on other data must replace them with its
// own, or inference scales the actions with the wrong ones.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace emb {

struct DreamZeroMetadata {
  nlohmann::json json;  // the file to write
  std::string tag;      // the entry the run's statistics went to
  std::string note;     // what differs from the release beyond the numbers ("" = nothing)
};

// `released`: the released folder's metadata.json; `run`: the run's entries (gr00t_metadata.hpp:
// one per embodiment of its data, in the same schema). The run's one entry replaces the released
// entry of its tag, or the release's only entry (under the released tag, the one inference is
// launched with); the release's other entries stay. `where` names the released file in errors.
// Throws emb::Error (exit code 2): a run of several embodiments, a release without entries, or
// one of several entries none of which is the run's tag.
DreamZeroMetadata dreamzero_metadata(const nlohmann::json& released, const nlohmann::json& run,
                                     const std::string& where);

}  // namespace emb
