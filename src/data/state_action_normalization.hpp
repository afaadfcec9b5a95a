// The upstream normalisation of states and actions (deck key data.normalize = upstream;
// DATA.md "Normalisation"), per dimension, computed in float32 in upstream's order:
//   gr00t (GR00T-N1.5, min_max; Isaac-GR00T 4af2b622 gr00t/data/transform/state_action.py:153-173
//          and its inverse :205-208): x' = 2·((x − min)/(max − min)) − 1, no clamping (the bounds are
//          the data's own), 0 where min == max; inverse x = (x' + 1)/2·(max − min) + min.
//   wan   (DreamZero, q99; dreamzero ab790c1 groot/vla/data/transform/state_action.py:99-120):
//          x' = 2·((x − q01)/(q99 − q01)) − 1, x itself where q01 == q99, then every value clamped
//          to [−1, 1]; inverse x = (x' + 1)/2·(q99 − q01) + q01.
// gr00t with per-key transforms (data.upstream_config, data.state_encoding = sin_cos;
// data/key_transform.hpp): each sub-key rotated, normalised by its own rule and/or sin/cos-encoded,
// the keys in the plan's order; the rest as above.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "config/token_config.hpp"
#include "data/key_transform.hpp"
#include "data/normalization_statistics.hpp"
#include "data/sample.hpp"

namespace emb {

// The rule of the whole-vector normalisation: min_max for gr00t, q99 for wan.
NormalizationRule normalization_rule(Family family);

// The per-dimension statistics a rule maps by, in float32: (min, max), (q01, q99), (mean, std);
// none for binary.
struct NormalizationBounds {
  NormalizationRule rule = NormalizationRule::min_max;
  std::vector<float> low, high;
};

NormalizationBounds normalization_bounds(NormalizationRule rule, const FieldStatistics& stats);

// One sub-key's transform with the bounds of its normalisation: the statistics of its columns, or,
// for a rotation converted and normalised, upstream's fixed min_max bounds of the target
// representation (state_action.py:309-326,440-452: ±1 for rotation_6d and quaternion, ±π for
// axis_angle and Euler angles).
struct BoundKeyTransform {
  KeyTransform key;
  NormalizationBounds bounds;
};

// An embodiment's bounds of its state and of its actions, and its per-key transforms
// (EmbodimentStatistics::key_transforms; a field without keys is normalised by its bounds).
struct EmbodimentBounds {
  NormalizationBounds state, action;
  std::vector<BoundKeyTransform> state_keys, action_keys;
};
using NormalizationBoundsMap = std::map<int32_t, EmbodimentBounds>;  // by embodiment id

// Every embodiment's bounds under `rule`, built once per dataset or checkpoint (the loader's
// samples and embsim's observations then only apply them).
NormalizationBoundsMap normalization_bounds(NormalizationRule rule, const NormalizationStatistics& stats);

// Rows of `stride` floats, of which the first `width` (<= the bounds' width) are normalised or
// un-normalised in place; the rest (padding, unused columns) stay as they are.
void normalize_rows(const NormalizationBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width);
void unnormalize_rows(const NormalizationBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width);

// Rows of `stride` floats whose first columns are raw values of the packed layout, made what the
// model sees: each key of `keys` read from its columns, transformed, and written in the keys'
// order from column 0; the columns after them up to the raw `width` set to 0.
void transform_key_rows(const std::vector<BoundKeyTransform>& keys, float* rows, int64_t n_rows, int64_t stride,
                        int64_t width);
// The inverse for actions, as upstream's unapply (state_action.py:498-526, concat.py:160-171): rows
// of `stride` floats of model-space actions made the raw layout's first `width` columns, each key
// un-normalised, converted back to its file's rotation type and written to its own columns; columns
// no key covers are 0.
void untransform_key_rows(const std::vector<BoundKeyTransform>& keys, float* rows, int64_t n_rows, int64_t stride,
                          int64_t width);

// Rows of `stride` floats whose first `width` (<= the bounds' width) columns are the embodiment's
// raw state, made the state as the model sees it: normalised in place, or by its per-key transforms
// (`width` must then be the whole state).
void normalize_state_rows(const EmbodimentBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width);
// Model-space action rows made the raw actions' first `width` columns (unnormalize_rows, or the
// per-key inverse).
void unnormalize_action_rows(const EmbodimentBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width);
// The columns the model sees of a raw state / action of `width`: width, or the per-key transforms'.
int64_t model_state_width(const EmbodimentBounds& b, int64_t width);
int64_t model_action_width(const EmbodimentBounds& b, int64_t width);

// A sample's state and actions (sample.hpp: gr00t state and actions, wan state and block_actions),
// each row's first state columns and `action_width` action columns (its embodiment's), with its
// embodiment's bounds (cfg.family's rule, normalization_rule) or per-key transforms (a relative
// key's rows past the episode's end, zeros as assembled, transformed like any other row, as
// upstream normalises its padding); with per-key action transforms the action mask is cleared past
// the model's action columns.
void normalize_sample(const EmbodimentBounds& bounds, const TokenConfig& cfg, int64_t action_width, Sample& s);

}  // namespace emb
