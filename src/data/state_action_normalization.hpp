// The upstream normalisation of states and actions (deck key data.normalize = upstream;
// DATA.md "Normalisation"), per dimension, computed in float32 in upstream's order:
//   gr00t (GR00T-N1.5, min_max; Isaac-GR00T 4af2b622 gr00t/data/transform/state_action.py:153-173
//          and its inverse :205-208): x' = 2·((x − min)/(max − min)) − 1, no clamping (the bounds are
//          the data's own), 0 where min == max; inverse x = (x' + 1)/2·(max − min) + min.
//   wan   (DreamZero, q99; dreamzero ab790c1 groot/vla/data/transform/state_action.py:99-120):
//          x' = 2·((x − q01)/(q99 − q01)) − 1, x itself where q01 == q99, then every value clamped
//          to [−1, 1]; inverse x = (x' + 1)/2·(q99 − q01) + q01.
// gr00t with data.state_encoding = sin_cos: the state sin/cos-encoded instead (data/state_sin_cos.hpp).
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "config/token_config.hpp"
#include "data/normalization_statistics.hpp"
#include "data/sample.hpp"

namespace emb {

enum class NormalizationRule { min_max, q99 };

NormalizationRule normalization_rule(Family family);

// The per-dimension bounds a rule maps to [−1, 1]: (min, max) or (q01, q99), in float32.
struct NormalizationBounds {
  NormalizationRule rule = NormalizationRule::min_max;
  std::vector<float> low, high;
};

NormalizationBounds normalization_bounds(NormalizationRule rule, const FieldStatistics& stats);

// An embodiment's bounds of its state and of its actions, and with the sin/cos state encoding
// its state's sub-key widths (EmbodimentStatistics::state_sin_cos; empty: the state's bounds).
struct EmbodimentBounds {
  NormalizationBounds state, action;
  std::vector<int64_t> state_sin_cos;
};
using NormalizationBoundsMap = std::map<int32_t, EmbodimentBounds>;  // by embodiment id

// Every embodiment's bounds under `rule`, built once per dataset or checkpoint (the loader's
// samples and embsim's observations then only apply them).
NormalizationBoundsMap normalization_bounds(NormalizationRule rule, const NormalizationStatistics& stats);

// Rows of `stride` floats, of which the first `width` (<= the bounds' width) are normalised or
// un-normalised in place; the rest (padding, unused columns) stay as they are.
void normalize_rows(const NormalizationBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width);
void unnormalize_rows(const NormalizationBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width);

// Rows of `stride` floats whose first `width` (<= the bounds' width) columns are the embodiment's
// raw state, made the state as the model sees it: min/max-normalised in place, or sin/cos-encoded
// over twice its width (which must then be the whole state the sub-keys cover).
void normalize_state_rows(const EmbodimentBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width);
// The columns normalize_state_rows fills for a raw state of `width`: width, twice it sin/cos-encoded.
int64_t model_state_width(const EmbodimentBounds& b, int64_t width);

// A sample's state and actions (sample.hpp: gr00t state and actions, wan state and block_actions),
// each row's first state columns and `action_width` action columns (its embodiment's), with its
// embodiment's bounds (cfg.family's rule, normalization_rule).
void normalize_sample(const EmbodimentBounds& bounds, const TokenConfig& cfg, int64_t action_width, Sample& s);

}  // namespace emb
