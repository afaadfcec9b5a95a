// Per-sub-key state/action transforms of GR00T-N1.5's data configs (data.upstream_config,
// data.state_encoding = sin_cos; DATA.md "Normalisation"): what is done to each sub-key of the
// packed file's modality attribute, in the order the model sees the keys. This file holds what a
// run selected and its checkpoint records; data/state_action_normalization.hpp applies it with the
// statistics, data/upstream_data_config.hpp resolves a config against a file.
//
// Upstream (Isaac-GR00T 4af2b622 gr00t/data/transform/state_action.py), per key of the config:
//   1. rotation: a key with a target rotation is converted from the rotation_type its
//      modality.json declares (:418-431, :489-491; data/rotation_conversion.hpp);
//   2. normalisation by the key's mode (:433-471, :493-494; Normalizer :98-212), a key without one
//      left as it is;
//   3. sin/cos: StateActionSinCosTransform (:591-606) gives a state key as [sin(K), cos(K)], applied
//      by the fourier_gr1 configs in place of the state's normalisation;
//   then ConcatTransform joins the keys in the config's order (gr00t/data/transform/concat.py:114-156).
#pragma once
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace emb {

// How values are mapped, per dimension (Normalizer, state_action.py:98-212):
//   min_max  2·((x − min)/(max − min)) − 1, no clamping, 0 where min == max; inverse (x + 1)/2·(max − min) + min
//   q99      2·((x − q01)/(q99 − q01)) − 1, x itself where q01 == q99, then clamped to [−1, 1];
//            inverse (x + 1)/2·(q99 − q01) + q01
//   mean_std (x − mean)/std, x itself where std == 0; inverse x·std + mean
//   binary   1 where x > 0.5, else 0; the inverse is the same threshold
enum class NormalizationRule { min_max, q99, mean_std, binary };

const char* normalization_rule_name(NormalizationRule rule);

struct KeyTransform {
  std::string key;               // the sub-key (modality.json's name, without "state."/"action.")
  int64_t start = 0, width = 0;  // its columns [start, start + width) in /steps/state or /steps/action
  // A rotation converted from `rotation_from` (the file's rotation_type) to `rotation_to`; both
  // empty when the key is not converted (no target, or the target is its own type, as upstream).
  std::string rotation_from, rotation_to;
  std::optional<NormalizationRule> normalization;  // none: the values as they are (after rotation)
  // modality.json's `absolute` (upstream normalises no converted relative rotation; the loader
  // pads a relative key with zeros past an episode's end in every run, data/sample.hpp).
  bool absolute = true;
  bool sin_cos = false;                            // [sin(K), cos(K)] (states only)
  // The columns the model sees of this key.
  int64_t model_width() const;
  bool operator==(const KeyTransform& o) const;
};

// An embodiment's per-key transforms; empty when the run selected none. `action` empty with a
// non-empty `state` (data.state_encoding = sin_cos): the actions min/max-normalised per column as
// without a plan.
struct KeyTransformPlan {
  std::string selected_by;  // what selected it, as the deck says it: "data.upstream_config = oxe_droid"
  // The data config it is of (data.upstream_config's NAME); "" for data.state_encoding = sin_cos.
  // The export's metadata.json check resolves it again against the files (app/gr00t_metadata.cpp).
  std::string upstream_config;
  std::vector<KeyTransform> state, action;  // in the order the model sees them
  bool empty() const { return selected_by.empty(); }
  bool operator==(const KeyTransformPlan& o) const {
    return selected_by == o.selected_by && upstream_config == o.upstream_config && state == o.state &&
           action == o.action;
  }
};

// How a deck selects a data config: selected_by of its plans is this and the config's name.
constexpr const char* kUpstreamConfigSelection = "data.upstream_config = ";

// The columns the model sees of `keys`: KeyTransforms, or the elements `key_of` gives one of
// (state_action_normalization.hpp's BoundKeyTransform), so that one sum serves both.
template <class Element, class KeyOf>
int64_t model_width(const std::vector<Element>& keys, KeyOf key_of) {
  int64_t width = 0;
  for (const Element& e : keys) width += key_of(e).model_width();
  return width;
}
inline int64_t model_width(const std::vector<KeyTransform>& keys) {
  return model_width(keys, [](const KeyTransform& k) -> const KeyTransform& { return k; });
}
// The raw columns `keys` read: up to the end of the last of their [start, start + width).
template <class Element, class KeyOf>
int64_t raw_width(const std::vector<Element>& keys, KeyOf key_of) {
  int64_t end = 0;
  for (const Element& e : keys) end = std::max(end, key_of(e).start + key_of(e).width);
  return end;
}
inline int64_t raw_width(const std::vector<KeyTransform>& keys) {
  return raw_width(keys, [](const KeyTransform& k) -> const KeyTransform& { return k; });
}

// The checkpoint's record of a plan ({"selected_by", "upstream_config", "state": [{key, start, width,
// rotation_from, rotation_to, normalization, absolute, sin_cos}], "action": [...]}) and its reading
// back; from_json throws emb::Error naming `where` on a malformed record. A record of before
// "upstream_config" names its config only in selected_by ("data.upstream_config = NAME"), which
// from_json reads it from.
nlohmann::json key_transform_plan_json(const KeyTransformPlan& plan);
KeyTransformPlan key_transform_plan_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace emb
