#include "data/state_action_normalization.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "data/state_sin_cos.hpp"

namespace emb {

NormalizationRule normalization_rule(Family family) {
  return family == Family::gr00t ? NormalizationRule::min_max : NormalizationRule::q99;
}

NormalizationBounds normalization_bounds(NormalizationRule rule, const FieldStatistics& stats) {
  NormalizationBounds b;
  b.rule = rule;
  const std::vector<double>& low = stats.values.at(rule == NormalizationRule::min_max ? "min" : "q01");
  const std::vector<double>& high = stats.values.at(rule == NormalizationRule::min_max ? "max" : "q99");
  b.low.assign(low.begin(), low.end());
  b.high.assign(high.begin(), high.end());
  return b;
}

NormalizationBoundsMap normalization_bounds(NormalizationRule rule, const NormalizationStatistics& stats) {
  NormalizationBoundsMap bounds;
  for (const auto& [embodiment, s] : stats)
    bounds[embodiment] = {normalization_bounds(rule, s.state), normalization_bounds(rule, s.action), s.state_sin_cos};
  return bounds;
}

namespace {

float normalized(const NormalizationBounds& b, size_t j, float x) {
  const float lo = b.low[j], hi = b.high[j];
  if (b.rule == NormalizationRule::min_max) return lo == hi ? 0.f : 2.f * ((x - lo) / (hi - lo)) - 1.f;
  return std::clamp(lo == hi ? x : 2.f * ((x - lo) / (hi - lo)) - 1.f, -1.f, 1.f);
}

void check_width(const NormalizationBounds& b, int64_t stride, int64_t width) {
  EMB_CHECK(width >= 0 && width <= stride && size_t(width) <= b.low.size(), "normalisation: ", width,
            " columns of rows of ", stride, " with statistics of width ", b.low.size());
}

}  // namespace

void normalize_rows(const NormalizationBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width) {
  check_width(b, stride, width);
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t j = 0; j < width; ++j) rows[r * stride + j] = normalized(b, size_t(j), rows[r * stride + j]);
}

void unnormalize_rows(const NormalizationBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width) {
  check_width(b, stride, width);
  for (int64_t r = 0; r < n_rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      float& x = rows[r * stride + j];
      x = (x + 1.f) / 2.f * (b.high[size_t(j)] - b.low[size_t(j)]) + b.low[size_t(j)];
    }
}

void normalize_state_rows(const EmbodimentBounds& b, float* rows, int64_t n_rows, int64_t stride, int64_t width) {
  if (b.state_sin_cos.empty()) {
    normalize_rows(b.state, rows, n_rows, stride, width);
    return;
  }
  EMB_CHECK(width == int64_t(b.state.low.size()), "sin/cos state encoding: a state of ", width,
            " columns, its sub-keys cover ", b.state.low.size());
  encode_state_sin_cos(b.state_sin_cos, rows, n_rows, stride);
}

int64_t model_state_width(const EmbodimentBounds& b, int64_t width) {
  return b.state_sin_cos.empty() ? width : 2 * width;
}

void normalize_sample(const EmbodimentBounds& bounds, const TokenConfig& cfg, int64_t action_width, Sample& s) {
  std::vector<float>& actions = cfg.family == Family::gr00t ? s.actions : s.block_actions;
  if (!s.state.empty())  // wan outside the DreamZero layout has no state
    normalize_state_rows(bounds, s.state.data(), int64_t(s.state.size()) / cfg.state_dim, cfg.state_dim,
                         int64_t(bounds.state.low.size()));
  normalize_rows(bounds.action, actions.data(), int64_t(actions.size()) / cfg.action_dim, cfg.action_dim,
                 action_width);
}

}  // namespace emb
