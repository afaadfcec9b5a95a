// The policy's side of data.normalize (rl/roles/policy_normalization.hpp): the observed state as the
// model saw states in training, the model's actions back to the environment's, by embodiment, from
// the statistics a checkpoint recorded; values written out by hand from GR00T's min_max.
#define BOOST_TEST_MODULE policy_normalization
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "rl/roles/policy_normalization.hpp"

using namespace emb;

namespace {

// Embodiment 1: state bounds [0, 4] and [-2, 2]; action bounds [0, 1] and [-1, 1].
std::string recorded() {
  auto field = [](std::vector<double> lo, std::vector<double> hi) {
    return nlohmann::json{{"rows", 5}, {"min", lo}, {"max", hi}, {"q01", lo}, {"q99", hi}, {"mean", lo}, {"std", lo}};
  };
  return nlohmann::json{{"1", {{"state", field({0, -2}, {4, 2})}, {"action", field({0, -1}, {1, 1})}}}}.dump();
}

}  // namespace

BOOST_AUTO_TEST_CASE(state_in_and_actions_out) {
  const PolicyNormalization n(recorded(), "ckpt.h5");
  BOOST_TEST(n.active());
  BOOST_TEST(n.state(1, {1.f, 1.f}) == (std::vector<float>{-0.5f, 0.5f}), boost::test_tools::per_element());
  std::vector<float> actions = {0.f, 0.f, 1.f, -1.f, 7.f};  // 2 rows of 2, then a column it leaves alone
  n.unnormalize_actions(1, actions.data(), 2, 2, 2);
  BOOST_TEST(actions == (std::vector<float>{0.5f, 0.f, 1.f, -1.f, 7.f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_checkpoint_without_statistics_acts_on_raw_values) {
  const PolicyNormalization raw("", "old.h5");
  BOOST_TEST(!raw.active());
  BOOST_TEST(raw.state(1, {1.f, 9.f}) == (std::vector<float>{1.f, 9.f}), boost::test_tools::per_element());
  std::vector<float> actions = {0.25f, 3.f};
  raw.unnormalize_actions(1, actions.data(), 1, 2, 2);
  BOOST_TEST(actions == (std::vector<float>{0.25f, 3.f}), boost::test_tools::per_element());
  BOOST_CHECK_NO_THROW(raw.check(4, 9, 9));
}

BOOST_AUTO_TEST_CASE(tasks_the_statistics_do_not_cover_are_refused) {
  const PolicyNormalization n(recorded(), "ckpt.h5");
  BOOST_CHECK_NO_THROW(n.check(1, 2, 2));
  try {
    n.check(2, 2, 2);
    BOOST_FAIL("an embodiment without statistics was accepted");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()) == "ckpt.h5: its normalisation statistics have no embodiment 2 (the run's data did "
                                        "not hold it)");
  }
  BOOST_CHECK_THROW(n.check(1, 3, 2), Error);  // a state wider than the statistics
}
