// A DreamZero export's experiment_cfg/conf.yaml (app/dreamzero_conf.hpp): relative_action and
// relative_action_keys set to the run's relative keys, every other line as released; written out
// by hand in OmegaConf's layout.
#define BOOST_TEST_MODULE dreamzero_conf
#include <boost/test/unit_test.hpp>

#include "app/dreamzero_conf.hpp"

using namespace emb;

namespace {

const char* kReleased =
    "max_state_dim: 64\n"
    "relative_action: true\n"
    "relative_action_per_horizon: false\n"
    "relative_action_keys:\n"
    "- joint_position\n"
    "- cartesian_position\n"
    "max_chunk_size: 5\n"
    "transforms:\n"
    "  oxe_droid:\n"
    "    _target_: groot.vla.data.transform.ComposedModalityTransform\n";

}  // namespace

BOOST_AUTO_TEST_CASE(an_absolute_run_turns_relative_actions_off) {
  BOOST_TEST(conf_with_relative_actions(kReleased, {}) ==
             "max_state_dim: 64\n"
             "relative_action: false\n"
             "relative_action_per_horizon: false\n"
             "relative_action_keys: []\n"
             "max_chunk_size: 5\n"
             "transforms:\n"
             "  oxe_droid:\n"
             "    _target_: groot.vla.data.transform.ComposedModalityTransform\n");
}

BOOST_AUTO_TEST_CASE(a_relative_run_names_its_keys) {
  BOOST_TEST(conf_with_relative_actions(kReleased, {"joint_position"}) ==
             "max_state_dim: 64\n"
             "relative_action: true\n"
             "relative_action_per_horizon: false\n"
             "relative_action_keys:\n"
             "- joint_position\n"
             "max_chunk_size: 5\n"
             "transforms:\n"
             "  oxe_droid:\n"
             "    _target_: groot.vla.data.transform.ComposedModalityTransform\n");
}

BOOST_AUTO_TEST_CASE(missing_keys_are_appended) {
  BOOST_TEST(conf_with_relative_actions("max_chunk_size: 4\n", {"joint_position"}) ==
             "max_chunk_size: 4\nrelative_action: true\nrelative_action_keys:\n- joint_position\n");
}
