// DreamZero's relative actions (upstream's DROID recipe, dreamzero ab790c1
// groot/vla/configs/data/dreamzero/droid_relative.yaml: relative_action_keys [joint_position];
// DATA.md "DreamZero alignment"): the columns of action sub-key K become action.K minus state.K
// at the anchor step of the action's chunk (lerobot_sharded.py:1039-1052,1113-1127), before the
// q99 normalisation, whose statistics for those columns are the relative chunks'
// (/stats/action_relative, packed_format.hpp); inference adds the observed state back after
// un-normalising (groot/vla/model/n1_5/sim_policy.py:537-607). Sub-keys pair action.K with
// state.K, as upstream does (lerobot.py:623-641), by the packed file's `modality` attribute.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "config/token_config.hpp"
#include "data/h5_file.hpp"
#include "data/sample.hpp"

namespace emb {

// One relative sub-key: action columns [action_start, action_start + width) minus state columns
// [state_start, state_start + width).
struct RelativeColumns {
  std::string key;
  int64_t action_start = 0, state_start = 0, width = 0;
  bool operator==(const RelativeColumns& o) const {
    return key == o.key && action_start == o.action_start && state_start == o.state_start && width == o.width;
  }
};
using RelativeActions = std::vector<RelativeColumns>;

// The columns of `keys` in a packed file's `modality` attribute (JSON, "" = none) of `file`.
// Throws emb::Error (exit 2), one line naming the file and the key: no modality attribute, a key
// that is no action sub-key, an action sub-key without a state partner of its width.
RelativeActions relative_columns(const std::string& modality, const std::vector<std::string>& keys,
                                 const std::string& file);
RelativeActions relative_columns(const H5File& f, const std::vector<std::string>& keys);

// Throws emb::Error (exit 2) naming the file and the embpack command to rerun unless the file
// holds /stats/action_relative of exactly `keys` over chunks of `chunk` steps.
void check_relative_statistics(const H5File& f, const std::vector<std::string>& keys, int64_t chunk);

// Rows of `stride` floats of actions, made relative to (subtract) or absolute from (add) the
// state row `anchor_state` on the relative columns; the other columns stay as they are.
void subtract_anchor_state(const RelativeActions& r, const float* anchor_state, float* rows, int64_t n_rows,
                           int64_t stride);
void add_anchor_state(const RelativeActions& r, const float* anchor_state, float* rows, int64_t n_rows,
                      int64_t stride);

// A DreamZero-layout sample's raw block actions made relative: block b's Ha rows minus its
// anchor's state (the block's first state row, sample.hpp).
void make_block_actions_relative(const RelativeActions& r, const TokenConfig& cfg, Sample& s);

// The checkpoint's record of them ([{"key", "action_start", "state_start", "width"}]) and back;
// from_json throws emb::Error naming `where` on a malformed record.
nlohmann::json relative_actions_json(const RelativeActions& r);
RelativeActions relative_actions_from_json(const nlohmann::json& j, const std::string& where);

// "joint_position,gripper": the keys as the packed file's attribute and messages write them.
std::string joined_keys(const std::vector<std::string>& keys);

}  // namespace emb
