// /stats/action_relative (packed_format.hpp): the action statistics of DreamZero's relative
// recipe (data/relative_actions.hpp), computed as upstream computes meta/relative_stats_dreamzero.json
// (dreamzero ab790c1 groot/vla/data/dataset/lerobot.py:613-725): for each relative sub-key, every
// chunk of `chunk` consecutive steps inside an episode (starting at each step i with
// i + chunk <= its length) minus the sub-key's state at i, pooled over all chunks; upstream
// samples 10000 trajectories when a dataset has more, we take them all. The other columns hold
// /stats/action's values, so the group is the whole action vector a relative run normalises with.
// Written by `embpack lerobot` and `embpack features` with --relative-actions KEYS
// [--relative-chunk N]; `embpack features` keeps an input's (recomputed on the rows it writes).
#pragma once
#include <string>
#include <vector>

#include "data/h5_file.hpp"
#include "packed_data.hpp"

namespace emb {

// --relative-actions KEYS --relative-chunk N of embpack lerobot and features (upstream's DROID
// recipe: joint_position over its 24-step action chunks, model.actions_per_block).
struct RelativeActionOptions {
  std::vector<std::string> keys;
  int64_t chunk = 24;
};

// Sets d's request from the options (no keys: d keeps what it carries, an input file's own).
void apply_relative_action_options(const RelativeActionOptions& o, PackedData& d);

// The keys and chunk of a packed file's /stats/action_relative into `p` (none: unchanged).
void read_relative_action_request(const H5File& f, PackedData& p);

// Throws emb::Error (exit 2) naming `out` when d asks for relative statistics its modality cannot
// pair (as relative_columns) or of chunks under 1 step (write_packed checks before writing).
void check_relative_action_request(const PackedData& d, const std::string& out);

// Writes /stats/action_relative into `f` (which holds /episodes/offsets and /stats/action
// already) from the whole state/action rows, when d asks for it. Throws emb::Error (exit 2)
// naming the file when no episode has `chunk` steps.
void write_relative_action_stats(H5File& f, const PackedData& d, const std::vector<float>& state,
                                 const std::vector<float>& action);

}  // namespace emb
