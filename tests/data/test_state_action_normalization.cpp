// The upstream normalisation of states and actions (data/state_action_normalization.hpp) and the
// statistics it uses (data/normalization_statistics.hpp), on values written out by hand from
// upstream's formulas: GR00T-N1.5's min_max (0 where min == max, no clamping) and DreamZero's q99
// (unchanged where q01 == q99, every value clamped to [-1, 1]).
#define BOOST_TEST_MODULE state_action_normalization
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "data/state_action_normalization.hpp"

using namespace emb;

namespace {

// Three dimensions: bounds [0, 4], [-2, 2] and [5, 5] (the last constant) for both rules.
FieldStatistics three_dims() {
  FieldStatistics s;
  s.rows = 10;
  s.values = {{"min", {0, -2, 5}}, {"max", {4, 2, 5}}, {"q01", {0, -2, 5}}, {"q99", {4, 2, 5}},
              {"mean", {2, 0, 5}}, {"std", {1, 1, 0}}};
  return s;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) BOOST_TEST(got[i] == want[i], "at " << i << ": " << got[i] << " vs " << want[i]);
}

}  // namespace

BOOST_AUTO_TEST_CASE(min_max_is_grootS_rule) {
  const NormalizationBounds b = normalization_bounds(NormalizationRule::min_max, three_dims());
  // Row 0 inside the bounds; row 1 on them; row 2 outside (min_max does not clamp).
  std::vector<float> rows = {1, 1, 7, 4, -2, 5, 6, -3, 0.5f};
  normalize_rows(b, rows.data(), 3, 3, 3);
  check_close(rows, {-0.5f, 0.5f, 0.f, 1.f, -1.f, 0.f, 2.f, -1.5f, 0.f});
  std::vector<float> back = {-0.5f, 0.5f, 0.f};
  unnormalize_rows(b, back.data(), 1, 3, 3);
  check_close(back, {1.f, 1.f, 5.f});  // a constant dimension comes back as its value
}

BOOST_AUTO_TEST_CASE(q99_is_dreamzeroS_rule) {
  const NormalizationBounds b = normalization_bounds(NormalizationRule::q99, three_dims());
  std::vector<float> rows = {1, 1, 7, 6, -3, 0.5f, 4, -2, -0.25f};
  normalize_rows(b, rows.data(), 3, 3, 3);
  // The constant dimension keeps its value, clamped like every other: 7 -> 1, 0.5, -0.25.
  check_close(rows, {-0.5f, 0.5f, 1.f, 1.f, -1.f, 0.5f, 1.f, -1.f, -0.25f});
  std::vector<float> back = {-0.5f, 0.5f, 1.f};
  unnormalize_rows(b, back.data(), 1, 3, 3);
  check_close(back, {1.f, 1.f, 5.f});
}

BOOST_AUTO_TEST_CASE(only_the_first_width_columns_of_each_row) {
  const NormalizationBounds b = normalization_bounds(NormalizationRule::min_max, three_dims());
  std::vector<float> rows = {2, 0, 9, 9, 3, 1, 9, 9};  // 2 rows of stride 4, width 2
  normalize_rows(b, rows.data(), 2, 4, 2);
  check_close(rows, {0.f, 0.f, 9.f, 9.f, 0.5f, 0.5f, 9.f, 9.f});
  BOOST_CHECK_THROW(normalize_rows(b, rows.data(), 1, 4, 4), Error);  // wider than the statistics
}

// Every embodiment's bounds built once from the statistics (the loader per dataset, embsim's
// policy per checkpoint), under the rule asked: min_max or q01/q99 of each field.
BOOST_AUTO_TEST_CASE(bounds_per_embodiment_built_once) {
  FieldStatistics narrow;
  narrow.rows = 4;
  narrow.values = {{"min", {-1}}, {"max", {3}}, {"q01", {0}}, {"q99", {2}}, {"mean", {1}}, {"std", {1}}};
  const NormalizationStatistics stats = {{0, {three_dims(), narrow, {}, {}}}, {31, {narrow, three_dims(), {}, {}}}};
  const NormalizationBoundsMap min_max = normalization_bounds(NormalizationRule::min_max, stats);
  BOOST_TEST_REQUIRE(min_max.size() == 2u);
  BOOST_TEST((min_max.at(0).state.rule == NormalizationRule::min_max));
  check_close(min_max.at(0).state.low, {0, -2, 5});
  check_close(min_max.at(0).state.high, {4, 2, 5});
  check_close(min_max.at(0).action.low, {-1});
  check_close(min_max.at(0).action.high, {3});
  check_close(min_max.at(31).state.low, {-1});
  check_close(min_max.at(31).action.high, {4, 2, 5});
  const NormalizationBoundsMap q99 = normalization_bounds(NormalizationRule::q99, stats);
  BOOST_TEST((q99.at(31).state.rule == NormalizationRule::q99));
  check_close(q99.at(31).state.low, {0});
  check_close(q99.at(31).state.high, {2});
  check_close(q99.at(0).action.low, {0});
  check_close(q99.at(0).action.high, {2});
}

BOOST_AUTO_TEST_CASE(samples_of_both_families) {
  const NormalizationStatistics stats = {{7, {three_dims(), three_dims(), {}, {}}}};
  TokenConfig gr00t;
  gr00t.family = Family::gr00t, gr00t.state_dim = 4, gr00t.action_dim = 3;
  Sample s;
  s.state = {1, 1, 7, 0};          // Sd 4, the file's 3 columns
  s.actions = {2, 0, 9, 4, 2, 9};  // Hz 2 × A 3, the embodiment's 2 columns
  normalize_sample(normalization_bounds(normalization_rule(Family::gr00t), stats).at(7), gr00t, 2, s);
  check_close(s.state, {-0.5f, 0.5f, 0.f, 0.f});
  check_close(s.actions, {0.f, 0.f, 9.f, 1.f, 1.f, 9.f});

  TokenConfig wan = gr00t;
  wan.family = Family::wan;
  Sample w;
  w.state = {1, 1, 7, 0, 6, -3, 0.5f, 0};  // nb·Ns = 2 rows
  w.block_actions = {2, 0, 9};
  normalize_sample(normalization_bounds(normalization_rule(Family::wan), stats).at(7), wan, 3, w);
  check_close(w.state, {-0.5f, 0.5f, 1.f, 0.f, 1.f, -1.f, 0.5f, 0.f});
  check_close(w.block_actions, {0.f, 0.f, 1.f});
}

BOOST_AUTO_TEST_CASE(files_combine_as_upstream_mixes_datasets) {
  FieldStatistics a, b;
  a.rows = 1, b.rows = 3;
  a.values = {{"mean", {0}}, {"std", {0}}, {"min", {-1}}, {"max", {1}}, {"q01", {-1}}, {"q99", {1}}};
  b.values = {{"mean", {4}}, {"std", {0}}, {"min", {2}}, {"max", {6}}, {"q01", {3}}, {"q99", {5}}};
  const FieldStatistics c = combine_statistics({&a, &b});
  BOOST_TEST(c.rows == 4);
  BOOST_TEST(c.values.at("mean")[0] == 3.0);                       // (0·1 + 4·3) / 4
  BOOST_TEST(c.values.at("std")[0] == std::sqrt(3.0));             // E[x²] 12 − 3²
  BOOST_TEST(c.values.at("min")[0] == -1.0);
  BOOST_TEST(c.values.at("max")[0] == 6.0);
  BOOST_TEST(c.values.at("q01")[0] == 2.0);                        // (−1·1 + 3·3) / 4
  BOOST_TEST(c.values.at("q99")[0] == 4.0);                        // (1·1 + 5·3) / 4
}

BOOST_AUTO_TEST_CASE(checkpoint_json_round_trips) {
  NormalizationStatistics stats;
  stats[2] = EmbodimentStatistics{three_dims(), three_dims(), {}, {}};
  stats[2].action.values["q99"][1] = 0.1 + 0.2;  // not a short decimal
  const NormalizationStatistics back = statistics_from_json(nlohmann::json::parse(statistics_json(stats).dump()), "t");
  BOOST_REQUIRE_EQUAL(back.size(), 1u);
  BOOST_TEST(back.at(2).action.values == stats[2].action.values);
  BOOST_TEST(back.at(2).state.rows == 10);
  BOOST_CHECK_THROW(statistics_from_json(nlohmann::json::parse(R"({"2": {"state": {}}})"), "t"), Error);
}
