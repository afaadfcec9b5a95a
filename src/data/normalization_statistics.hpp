// The state and action statistics a run normalises with (DATA.md "Normalisation"): ONE source for
// the loader, the checkpoint (its `normalization` attribute), the export's metadata.json and
// embsim's policy. Per embodiment id: the /stats/state and /stats/action of every packed file
// whose episodes hold that id (packed_format.hpp: over all of the file's rows), several files
// combined as upstream GR00T mixes datasets (gr00t_finetune.py percentile_mixing_method
// "weighted_average"): means and deviations pooled by rows, minima and maxima exact, the
// percentiles averaged with row weights. A file of several embodiments gives each of them its
// statistics over all its rows (the file holds no per-embodiment statistics). With relative
// actions (data.relative_action_keys, data/relative_actions.hpp) an embodiment's action statistics
// are /stats/action_relative (its relative columns the relative chunks', as upstream's metadata
// replaces them, lerobot.py:1057-1100) and it records the relative columns.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/h5_file.hpp"
#include "data/key_transform.hpp"
#include "data/relative_actions.hpp"
#include "data/upstream_data_config.hpp"

namespace emb {

// One statistic vector per name (packed::kStatNames: mean, std, min, max, q01, q99) of one
// field, each [width], and the rows behind them.
struct FieldStatistics {
  std::map<std::string, std::vector<double>> values;
  double rows = 0;
  size_t width() const { return values.empty() ? 0 : values.begin()->second.size(); }
};

struct EmbodimentStatistics {
  FieldStatistics state, action;
  RelativeActions relative_action;  // empty: absolute actions
  // data.upstream_config / data.state_encoding = sin_cos: the per-key transforms of its state and
  // actions (data/key_transform.hpp) over its files' sub-keys; empty: every column by the family's rule.
  KeyTransformPlan key_transforms;
};

// The relative sub-keys of a run (data.relative_action_keys) and its chunk length
// (model.actions_per_block); no keys: absolute actions.
struct RelativeActionChoice {
  std::vector<std::string> keys;
  int64_t chunk = 0;
};

using NormalizationStatistics = std::map<int32_t, EmbodimentStatistics>;  // by embodiment id

// One packed file's /stats/<group> of /steps/<field> (field "state" or "action"; group the
// field, or "action_relative"). Throws emb::Error (exit 2) "FILE:/stats/<group>/<name>: ..." when
// a statistic is missing or its width is not the one of /steps/<field>.
FieldStatistics read_field_statistics(const H5File& f, const char* field, const char* group = nullptr);

// Several files' statistics of one field as one (the mixture of the header).
FieldStatistics combine_statistics(const std::vector<const FieldStatistics*>& parts);

// The statistics of a run's files (all open, parallel or serial alike; every rank of a parallel
// file makes the same reads), by the embodiment ids of their episodes. Throws (exit 2) as
// read_field_statistics, or naming the file when one embodiment's files differ in width or in
// relative columns, and as relative_columns and check_relative_statistics with relative actions.
// With a non-empty `key_transforms` each embodiment records the plan it gives its files
// (key_transform_plan), which must agree.
NormalizationStatistics normalization_statistics(const std::vector<const H5File*>& files,
                                                 const RelativeActionChoice& relative = {},
                                                 const KeyTransformChoice& key_transforms = {});

// The JSON the checkpoint records ({"<id>": {"state": {"rows", "mean", ...}, "action": ...}},
// with "relative_action": [...] where the embodiment has relative columns, "key_transforms": {...}
// where it has per-key transforms, key_transform_plan_json)
// and its reading back; from_json throws emb::Error naming `where` on a malformed record.
nlohmann::json statistics_json(const NormalizationStatistics& stats);
NormalizationStatistics statistics_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace emb
