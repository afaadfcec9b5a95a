// GR00T-N1.5's data configs (deck key data.upstream_config = NAME; DATA.md "Normalisation"): the
// state and action keys of each config of Isaac-GR00T 4af2b622 gr00t/experiment/data_config.py
// (DATA_CONFIG_MAP :775-788), in its state_concat_order / action_concat_order, with the per-key
// transforms its StateActionTransform / StateActionSinCosTransform apply (data/key_transform.hpp).
// A key the config gives no normalisation mode reaches the model as it is (state_action.py:282-285).
//
// Resolving a config against a packed file (its modality attribute, data/modality_sub_keys.hpp)
// refuses, in one line naming the file and the key, what upstream's set_metadata refuses
// (state_action.py:386-471) or its ConcatTransform asserts (concat.py:145-151): a missing key, a
// rotation target of a key without a rotation_type, a converted rotation that is normalised but
// relative (absolute = false) or by another mode than min_max or to a matrix, a normalised key that
// is not continuous (a non-float dtype) by another mode than binary, an action rotation target of
// another width than the key's.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "data/h5_file.hpp"
#include "data/key_transform.hpp"
#include "data/modality_sub_keys.hpp"
#include "data/packed_dataset.hpp"

namespace emb {

struct UpstreamKeySpec {
  const char* key;  // the sub-key, without "state."/"action."
  std::optional<NormalizationRule> normalization;
  const char* rotation_to;  // "" = none
  bool sin_cos;
};

struct UpstreamDataConfig {
  const char* name;
  std::vector<UpstreamKeySpec> state, action;
};

const std::vector<UpstreamDataConfig>& upstream_data_configs();
// The config called `name`; throws emb::Error (exit 2) listing the known names otherwise.
const UpstreamDataConfig& upstream_data_config(const std::string& name);
std::string upstream_data_config_names();  // "fourier_gr1_arms_waist, ..."

// What selects a run's per-key transforms (the deck's data.state_encoding and data.upstream_config).
struct KeyTransformChoice {
  bool state_sin_cos = false;
  std::string upstream_config;  // "" = none
  // How the deck says it: "data.upstream_config = NAME", "data.state_encoding = sin_cos", or
  // "neither data.upstream_config nor data.state_encoding = sin_cos".
  std::string text() const;
};

// The plan `choice` gives a packed file (empty for an empty choice). Throws emb::Error (exit 2)
// naming the file as the header says.
KeyTransformPlan key_transform_plan(const H5File& f, const KeyTransformChoice& choice);

// Every embodiment of every file has the action and state columns the plan `choice` gives the
// file reads: a file of several embodiments has one modality attribute, of its widest
// embodiment's columns, and a narrower embodiment's missing columns are zeros (a rotation of
// zeros is no rotation). Throws emb::Error (exit 2) naming the file, the embodiment, the part,
// the columns it has and those needed; actions are checked first.
void check_embodiment_key_widths(const PackedDataset& data, const KeyTransformChoice& choice);

// The same from the file's sub-keys, `file` naming it in errors.
KeyTransformPlan upstream_config_plan(const UpstreamDataConfig& config, const std::vector<ModalitySubKey>& state_keys,
                                      const std::vector<ModalitySubKey>& action_keys, const std::string& file);

}  // namespace emb
