#include "data/state_action_normalization.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"
#include "data/rotation_conversion.hpp"

namespace emb {

NormalizationRule normalization_rule(Family family) {
  return family == Family::gr00t ? NormalizationRule::min_max : NormalizationRule::q99;
}

namespace {

// The statistics a rule maps by; none for binary.
std::pair<const char*, const char*> bound_names(NormalizationRule rule) {
  switch (rule) {
    case NormalizationRule::min_max: return {"min", "max"};
    case NormalizationRule::q99: return {"q01", "q99"};
    case NormalizationRule::mean_std: return {"mean", "std"};
    case NormalizationRule::binary: break;
  }
  return {nullptr, nullptr};
}

// Upstream's fixed min_max bounds of a converted rotation's target (state_action.py:309-326).
NormalizationBounds rotation_bounds(const std::string& type) {
  const float limit = type == "rotation_6d" || type == "quaternion" ? 1.f : float(M_PI);
  const size_t width = size_t(rotation_width(type));
  return {NormalizationRule::min_max, std::vector<float>(width, -limit), std::vector<float>(width, limit)};
}

NormalizationBounds key_bounds(const KeyTransform& k, const FieldStatistics& stats) {
  if (!k.normalization) return {};
  if (!k.rotation_to.empty()) return rotation_bounds(k.rotation_to);
  NormalizationBounds all = normalization_bounds(*k.normalization, stats);
  if (all.low.empty()) return all;
  EMB_CHECK(k.start + k.width <= int64_t(all.low.size()), "per-key transforms: ", k.key, " at [", k.start, ", ",
            k.start + k.width, ") of statistics of width ", all.low.size());
  return {all.rule, {all.low.begin() + k.start, all.low.begin() + k.start + k.width},
          {all.high.begin() + k.start, all.high.begin() + k.start + k.width}};
}

std::vector<BoundKeyTransform> bound_keys(const std::vector<KeyTransform>& keys, const FieldStatistics& stats) {
  std::vector<BoundKeyTransform> out;
  for (const KeyTransform& k : keys) out.push_back({k, key_bounds(k, stats)});
  return out;
}

float normalized(const NormalizationBounds& b, size_t j, float x) {
  if (b.rule == NormalizationRule::binary) return x > 0.5f ? 1.f : 0.f;
  const float lo = b.low[j], hi = b.high[j];
  switch (b.rule) {
    case NormalizationRule::min_max: return lo == hi ? 0.f : 2.f * ((x - lo) / (hi - lo)) - 1.f;
    case NormalizationRule::q99: return std::clamp(lo == hi ? x : 2.f * ((x - lo) / (hi - lo)) - 1.f, -1.f, 1.f);
    case NormalizationRule::mean_std: return hi == 0.f ? x : (x - lo) / hi;
    case NormalizationRule::binary: break;
  }
  return x;
}

float unnormalized(const NormalizationBounds& b, size_t j, float x) {
  if (b.rule == NormalizationRule::binary) return x > 0.5f ? 1.f : 0.f;
  if (b.rule == NormalizationRule::mean_std) return x * b.high[j] + b.low[j];
  return (x + 1.f) / 2.f * (b.high[j] - b.low[j]) + b.low[j];
}

void check_width(const NormalizationBounds& b, int64_t stride, int64_t width) {
  EMB_CHECK(width >= 0 && width <= stride && size_t(width) <= b.low.size(), "normalisation: ", width,
            " columns of rows of ", stride, " with statistics of width ", b.low.size());
}

// A rotation's values, as many as the widest representation (a matrix) holds.
using RotationValues = std::array<double, 9>;

// One key's raw values (its file columns) as the model sees them, written to `out` (its
// model_width() columns) and transformed there: the loader's samples go through here, so no
// buffer is allocated per key.
void transform_key(const BoundKeyTransform& t, const float* raw, float* out) {
  const KeyTransform& k = t.key;
  const int64_t n = k.rotation_to.empty() ? k.width : rotation_width(k.rotation_to);
  if (k.rotation_to.empty()) {
    std::copy(raw + k.start, raw + k.start + k.width, out);
  } else {
    EMB_CHECK(k.width == rotation_width(k.rotation_from), "per-key transforms: ", k.key, " has ", k.width,
              " columns, a ", k.rotation_from, " ", rotation_width(k.rotation_from));
    RotationValues from{}, to{};
    std::copy(raw + k.start, raw + k.start + k.width, from.begin());
    convert_rotation(k.rotation_from, k.rotation_to, from.data(), to.data());
    std::copy(to.begin(), to.begin() + n, out);
  }
  if (k.normalization)
    for (int64_t j = 0; j < n; ++j) out[j] = normalized(t.bounds, size_t(j), out[j]);
  if (k.sin_cos)
    for (int64_t j = 0; j < n; ++j) {
      const float x = out[j];
      out[n + j] = std::cos(x), out[j] = std::sin(x);
    }
}

// The inverse of transform_key for an action key: its model columns `in` to its file columns.
void untransform_key(const BoundKeyTransform& t, const float* in, float* raw) {
  const KeyTransform& k = t.key;
  EMB_CHECK(!k.sin_cos, "per-key transforms: the sin/cos encoding of ", k.key, " has no inverse (states only)");
  const int64_t n = k.model_width();
  const auto value = [&](int64_t j) { return k.normalization ? unnormalized(t.bounds, size_t(j), in[j]) : in[j]; };
  if (k.rotation_to.empty()) {
    for (int64_t j = 0; j < n; ++j) raw[k.start + j] = value(j);
    return;
  }
  EMB_CHECK(k.width == rotation_width(k.rotation_from), "per-key transforms: ", k.key, " has ", k.width,
            " columns, a ", k.rotation_from, " ", rotation_width(k.rotation_from));
  RotationValues to{}, from{};
  for (int64_t j = 0; j < n; ++j) to[size_t(j)] = value(j);
  convert_rotation(k.rotation_to, k.rotation_from, to.data(), from.data());
  std::copy(from.begin(), from.begin() + k.width, raw + k.start);
}

const KeyTransform& transform_of(const BoundKeyTransform& t) { return t.key; }

int64_t raw_end(const std::vector<BoundKeyTransform>& keys) { return raw_width(keys, transform_of); }

int64_t keys_model_width(const std::vector<BoundKeyTransform>& keys) { return model_width(keys, transform_of); }

// Rewrites each of n_rows rows (`stride` apart) key by key: the row's columns are copied aside
// (the raw ones, or for the inverse the model's), the row is cleared over both widths, and
// `rewrite(key, saved columns, row, model column)` writes each key, the model column running
// over the keys' model widths.
template <class Rewrite>
void rewrite_key_rows(const std::vector<BoundKeyTransform>& keys, float* rows, int64_t n_rows, int64_t stride,
                      int64_t width, bool inverse, Rewrite rewrite) {
  const int64_t model = keys_model_width(keys);
  EMB_CHECK(raw_end(keys) <= width && width <= stride && model <= stride, "per-key transforms: keys up to column ",
            raw_end(keys), inverse ? " from " : " to ", model, " columns, of a raw width ", width, " in rows of ",
            stride);
  const int64_t saved_width = inverse ? model : width;
  std::vector<float> saved(static_cast<size_t>(saved_width));
  for (int64_t r = 0; r < n_rows; ++r) {
    float* row = rows + r * stride;
    std::copy(row, row + saved_width, saved.begin());
    std::fill(row, row + std::max(width, model), 0.f);
    int64_t column = 0;
    for (const BoundKeyTransform& t : keys) {
      rewrite(t, saved.data(), row, column);
      column += t.key.model_width();
    }
  }
}

}  // namespace

NormalizationBounds normalization_bounds(NormalizationRule rule, const FieldStatistics& stats) {
  NormalizationBounds b;
  b.rule = rule;
  const auto [low_name, high_name] = bound_names(rule);
  if (!low_name) return b;
  const std::vector<double>& low = stats.values.at(low_name);
  const std::vector<double>& high = stats.values.at(high_name);
  b.low.assign(low.begin(), low.end());
  b.high.assign(high.begin(), high.end());
  return b;
}

NormalizationBoundsMap normalization_bounds(NormalizationRule rule, const NormalizationStatistics& stats) {
  NormalizationBoundsMap bounds;
  for (const auto& [embodiment, s] : stats)
    bounds[embodiment] = {normalization_bounds(rule, s.state), normalization_bounds(rule, s.action),
                          bound_keys(s.key_transforms.state, s.state), bound_keys(s.key_transforms.action, s.action)};
  return bounds;
}

void normalize_rows(const NormalizationBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width) {
  check_width(b, stride, width);
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t j = 0; j < width; ++j) rows[r * stride + j] = normalized(b, size_t(j), rows[r * stride + j]);
}

void unnormalize_rows(const NormalizationBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width) {
  check_width(b, stride, width);
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t j = 0; j < width; ++j) rows[r * stride + j] = unnormalized(b, size_t(j), rows[r * stride + j]);
}

void transform_key_rows(const std::vector<BoundKeyTransform>& keys, float* rows, int64_t n_rows, int64_t stride,
                        int64_t width) {
  rewrite_key_rows(keys, rows, n_rows, stride, width, false,
                   [](const BoundKeyTransform& t, const float* raw, float* row, int64_t column) {
                     transform_key(t, raw, row + column);
                   });
}

void untransform_key_rows(const std::vector<BoundKeyTransform>& keys, float* rows, int64_t n_rows, int64_t stride,
                          int64_t width) {
  rewrite_key_rows(keys, rows, n_rows, stride, width, true,
                   [](const BoundKeyTransform& t, const float* model, float* row, int64_t column) {
                     untransform_key(t, model + column, row);
                   });
}

void normalize_state_rows(const EmbodimentBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width) {
  if (b.state_keys.empty()) {
    normalize_rows(b.state, rows, n_rows, stride, width);
    return;
  }
  EMB_CHECK(width == int64_t(b.state.low.size()), "per-key state transforms: a state of ", width,
            " columns, the statistics' is ", b.state.low.size());
  transform_key_rows(b.state_keys, rows, n_rows, stride, width);
}

void unnormalize_action_rows(const EmbodimentBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width) {
  if (b.action_keys.empty())
    unnormalize_rows(b.action, rows, n_rows, stride, width);
  else
    untransform_key_rows(b.action_keys, rows, n_rows, stride, width);
}

int64_t model_state_width(const EmbodimentBounds& b, int64_t width) {
  return b.state_keys.empty() ? width : keys_model_width(b.state_keys);
}

int64_t model_action_width(const EmbodimentBounds& b, int64_t width) {
  return b.action_keys.empty() ? width : keys_model_width(b.action_keys);
}

void normalize_sample(const EmbodimentBounds& bounds, const TokenConfig& cfg, int64_t action_width, Sample& s) {
  const bool gr00t = cfg.family == Family::gr00t;
  std::vector<float>& actions = gr00t ? s.actions : s.block_actions;
  if (!s.state.empty())  // wan outside the DreamZero layout has no state
    normalize_state_rows(bounds, s.state.data(), int64_t(s.state.size()) / cfg.state_dim, cfg.state_dim,
                         int64_t(bounds.state.low.size()));
  const int64_t n_rows = int64_t(actions.size()) / cfg.action_dim;
  if (bounds.action_keys.empty()) {
    normalize_rows(bounds.action, actions.data(), n_rows, cfg.action_dim, action_width);
    return;
  }
  transform_key_rows(bounds.action_keys, actions.data(), n_rows, cfg.action_dim, action_width);
  std::vector<float>& mask = gr00t ? s.action_mask : s.act_mask;
  const int64_t model = model_action_width(bounds, action_width);
  for (int64_t r = 0; r < n_rows && model < action_width; ++r)
    std::fill(mask.begin() + r * cfg.action_dim + model, mask.begin() + r * cfg.action_dim + action_width, 0.f);
}

}  // namespace emb
