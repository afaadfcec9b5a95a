// data.upstream_config = NAME (data/upstream_data_config.hpp): the configs' table, resolving a
// config against a packed file's sub-keys and what it refuses, the loader's samples of a file whose
// every row holds values known in closed form (oxe_droid: a quaternion state as rotation_6d, an
// Euler-angle action delta as axis/angle, a binary gripper, keys reordered and one dropped, the
// relative deltas zero past an episode's end), the
// checkpoint's record, embsim's PolicyNormalization giving the same state and inverting the actions,
// a resume under another config refused, and the export's metadata.json describing the keys as
// trained (refused when the file's modality no longer does).
#define BOOST_TEST_MODULE upstream_data_config
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "app/gr00t_metadata.hpp"
#include "app/start_checks.hpp"
#include "comm/world_fixture.hpp"
#include "config/schema.hpp"
#include "core/error.hpp"
#include "data/loader.hpp"
#include "data/upstream_data_config.hpp"
#include "data_fixtures.hpp"
#include "rl/roles/policy_normalization.hpp"

using namespace emb;

namespace {

// oxe_droid's keys in another column order, with a state and an action key the config does not
// take. State [extra 2 | eef_rotation quaternion 4 | eef_position 3 | gripper_position 1] = 10;
// action [gripper_position 1 | eef_rotation_delta euler_angles_rpy 3 | eef_position_delta 3 | extra 1] = 8.
const char* kDroidModality =
    R"({"state": {"extra": {"start": 0, "end": 2},)"
    R"( "eef_rotation": {"start": 2, "end": 6, "rotation_type": "quaternion", "absolute": true, "continuous": true},)"
    R"( "eef_position": {"start": 6, "end": 9}, "gripper_position": {"start": 9, "end": 10}},)"
    R"( "action": {"gripper_position": {"start": 0, "end": 1, "continuous": false},)"
    R"( "eef_rotation_delta": {"start": 1, "end": 4, "rotation_type": "euler_angles_rpy", "absolute": false},)"
    R"( "eef_position_delta": {"start": 4, "end": 7, "absolute": false}, "extra": {"start": 7, "end": 8}}})";
constexpr int64_t kStateWidth = 10, kActionWidth = 8;

// Row r's raw values: a rotation of 0.05·r about Z as a quaternion, position (r, 2r, 0.5),
// gripper r mod 2; actions: gripper 0.3 or 0.7, a rotation of 0.01·r about Z as rpy, position
// delta (r, −r, 0.25), extra 5.
void raw_rows(int64_t r, float* state, float* action) {
  const double theta = 0.05 * double(r), phi = 0.01 * double(r);
  const float s[kStateWidth] = {100.f + float(r), -100.f, float(std::cos(theta / 2)), 0.f, 0.f,
                                float(std::sin(theta / 2)), float(r), float(2 * r), 0.5f, float(r % 2)};
  const float a[kActionWidth] = {r % 2 ? 0.7f : 0.3f, 0.f, 0.f, float(phi), float(r), float(-r), 0.25f, 5.f};
  std::copy(s, s + kStateWidth, state);
  std::copy(a, a + kActionWidth, action);
}

// What oxe_droid gives the model of row r of a file of `steps` rows (min/max over all rows):
// state [position min_max | rotation_6d | gripper min_max], action [position delta | axis/angle | binary].
std::vector<float> model_state(int64_t r, int64_t steps) {
  const float last = float(steps - 1), theta = float(0.05 * double(r));
  const auto min_max = [](float x, float lo, float hi) { return lo == hi ? 0.f : 2.f * ((x - lo) / (hi - lo)) - 1.f; };
  return {min_max(float(r), 0.f, last),
          min_max(float(2 * r), 0.f, 2.f * last),
          0.f,
          std::cos(theta),
          -std::sin(theta),
          0.f,
          std::sin(theta),
          std::cos(theta),
          0.f,
          min_max(float(r % 2), 0.f, 1.f)};
}

std::vector<float> model_action(int64_t r) {
  return {float(r), float(-r), 0.25f, 0.f, 0.f, float(0.01 * double(r)), r % 2 ? 1.f : 0.f};
}

void check_near(const float* got, const std::vector<float>& want, const std::string& what, float tol = 2e-6f) {
  for (size_t i = 0; i < want.size(); ++i)
    BOOST_TEST(std::fabs(got[i] - want[i]) <= tol, what << " at " << i << ": " << got[i] << " vs " << want[i]);
}

// A gr00t file of 3 episodes whose rows are raw_rows, with `modality`.
PackedData droid_data(const std::string& modality) {
  SynthOptions o = test::tiny_synth("gr00t", 3, 11);
  o.state_dim = kStateWidth, o.action_dim = kActionWidth, o.embodiments = 1;
  PackedData p = synthesize(o);
  for (int64_t r = 0; r < p.steps(); ++r) raw_rows(r, &p.state[size_t(r * kStateWidth)], &p.action[size_t(r * kActionWidth)]);
  p.modality = modality;
  return p;
}

std::string write(const PackedData& p, const std::string& name) {
  const std::string path = test::scratch_dir("upstream_data_config") + "/" + name + ".h5";
  write_packed(p, path, "test");
  return path;
}

ModelConfig model(int state_dim, int action_dim) {
  ModelConfig c = test::tiny_model(Family::gr00t);
  c.state_dim = state_dim, c.action_dim = action_dim;
  return c;
}

DataConfig droid_deck(const std::string& path, const std::string& config = "oxe_droid") {
  DataConfig dc;
  dc.paths = {path};
  dc.upstream_config = config;
  dc.global_batch = 4, dc.chunk_rows = 8, dc.shuffle_buffer = 16, dc.tokens_per_mb = 1 << 20, dc.prefetch = 0;
  return dc;
}

ModalitySubKey sub_key(const char* name, int64_t start, int64_t end, const char* rotation = "", bool absolute = true,
                       bool continuous = true) {
  return {name, start, end, absolute, continuous, rotation};
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

BOOST_AUTO_TEST_CASE(the_table_holds_upstreams_configs_and_refuses_other_names) {
  BOOST_TEST(upstream_data_config_names() ==
             "fourier_gr1_arms_waist, fourier_gr1_arms_only, fourier_gr1_full_upper_body, bimanual_panda_gripper, "
             "bimanual_panda_hand, single_panda_gripper, so100, so100_dualcam, unitree_g1, unitree_g1_full_body, "
             "oxe_droid, agibot_genie1");
  const std::string msg = test::input_error_message([] { upstream_data_config("oxe"); });
  BOOST_TEST(msg == "data.upstream_config = oxe: not one of GR00T-N1.5's data configs (" + upstream_data_config_names() +
                        ")");
  const UpstreamDataConfig& arms = upstream_data_config("fourier_gr1_arms_only");
  BOOST_TEST(arms.state.size() == 4u);
  for (const UpstreamKeySpec& k : arms.state) BOOST_TEST((k.sin_cos && !k.normalization));
  for (const UpstreamKeySpec& k : arms.action) BOOST_TEST((k.normalization == NormalizationRule::min_max));
  // --help lists the same names (the schema cannot include the data layer's table).
  const std::string doc = find_key_spec("data.upstream_config")->doc;
  for (const UpstreamDataConfig& c : upstream_data_configs())
    BOOST_TEST(doc.find(c.name) != std::string::npos, c.name);
  // Only the state is sin/cos-encoded anywhere (upstream has no inverse of it for actions).
  for (const UpstreamDataConfig& c : upstream_data_configs())
    for (const UpstreamKeySpec& k : c.action) BOOST_TEST(!k.sin_cos);
}

BOOST_AUTO_TEST_CASE(a_config_resolves_to_the_files_columns_in_its_own_order) {
  const std::vector<ModalitySubKey> state = {sub_key("extra", 0, 2), sub_key("eef_rotation", 2, 6, "quaternion"),
                                             sub_key("eef_position", 6, 9), sub_key("gripper_position", 9, 10)};
  const std::vector<ModalitySubKey> action = {
      sub_key("gripper_position", 0, 1, "", true, false), sub_key("eef_rotation_delta", 1, 4, "euler_angles_rpy", false),
      sub_key("eef_position_delta", 4, 7, "", false), sub_key("extra", 7, 8)};
  const KeyTransformPlan plan = upstream_config_plan(upstream_data_config("oxe_droid"), state, action, "f.h5");
  BOOST_TEST(plan.selected_by == "data.upstream_config = oxe_droid");
  BOOST_REQUIRE_EQUAL(plan.state.size(), 3u);
  BOOST_TEST(plan.state[0].key == "eef_position");
  BOOST_TEST(plan.state[0].start == 6);
  BOOST_TEST(plan.state[1].rotation_from == "quaternion");
  BOOST_TEST(plan.state[1].rotation_to == "rotation_6d");
  BOOST_TEST(!plan.state[1].normalization);
  BOOST_TEST(model_width(plan.state) == 10);
  BOOST_REQUIRE_EQUAL(plan.action.size(), 3u);
  BOOST_TEST(plan.action[1].rotation_to == "axis_angle");
  BOOST_TEST((plan.action[2].normalization == NormalizationRule::binary));
  BOOST_TEST(model_width(plan.action) == 7);
  // A rotation already in its target representation is not converted; its statistics normalise it
  // where the config normalises it (upstream converts only where the types differ).
  const std::vector<ModalitySubKey> six_d = {sub_key("eef_position", 0, 3), sub_key("eef_rotation", 3, 9, "rotation_6d"),
                                             sub_key("gripper_position", 9, 10)};
  BOOST_TEST(upstream_config_plan(upstream_data_config("oxe_droid"), six_d, action, "f.h5").state[1].rotation_to.empty());
}

BOOST_AUTO_TEST_CASE(what_upstream_refuses_is_refused_in_one_line) {
  const UpstreamDataConfig& droid = upstream_data_config("oxe_droid");
  const std::vector<ModalitySubKey> state = {sub_key("eef_position", 0, 3), sub_key("eef_rotation", 3, 7, "quaternion"),
                                             sub_key("gripper_position", 7, 8)};
  const std::vector<ModalitySubKey> action = {sub_key("eef_position_delta", 0, 3),
                                              sub_key("eef_rotation_delta", 3, 6, "euler_angles_rpy"),
                                              sub_key("gripper_position", 6, 7)};
  const auto refusal = [](const UpstreamDataConfig& c, const std::vector<ModalitySubKey>& s,
                          const std::vector<ModalitySubKey>& a) {
    return test::input_error_message([&] { upstream_config_plan(c, s, a, "f.h5"); });
  };
  BOOST_TEST(refusal(droid, {state[0], state[1]}, action) ==
             "f.h5: data.upstream_config = oxe_droid: state.gripper_position is not in the file (its state sub-keys: "
             "eef_position, eef_rotation); convert with embpack lerobot --state-keys naming the config's keys");
  BOOST_TEST(refusal(droid, {state[0], sub_key("eef_rotation", 3, 7), state[2]}, action) ==
             "f.h5: data.upstream_config = oxe_droid: state.eef_rotation is to be given as rotation_6d but "
             "modality.json declares no rotation_type for it");
  BOOST_TEST(refusal(droid, {state[0], sub_key("eef_rotation", 3, 6, "quaternion"), state[2]}, action)
                 .find("state.eef_rotation has 3 columns, a quaternion has 4") != std::string::npos);
  BOOST_TEST(refusal(droid, state, {action[0], sub_key("eef_rotation_delta", 3, 7, "quaternion"), action[2]}) ==
             "f.h5: data.upstream_config = oxe_droid: action.eef_rotation_delta as axis_angle would be 3 columns, its "
             "quaternion 4 (upstream's ConcatTransform keeps an action key's width)");
  const UpstreamDataConfig& panda = upstream_data_config("single_panda_gripper");
  const std::vector<ModalitySubKey> panda_state = {
      sub_key("end_effector_position_relative", 0, 3), sub_key("end_effector_rotation_relative", 3, 7, "quaternion", false),
      sub_key("gripper_qpos", 7, 9), sub_key("base_position", 9, 12), sub_key("base_rotation", 12, 16, "quaternion")};
  const std::vector<ModalitySubKey> panda_action = {
      sub_key("end_effector_position", 0, 3),       sub_key("end_effector_rotation", 3, 6), sub_key("gripper_close", 6, 7),
      sub_key("base_motion", 7, 11),                sub_key("control_mode", 11, 12, "", true, false)};
  BOOST_TEST(refusal(panda, panda_state, panda_action).find("state.end_effector_rotation_relative is a relative rotation "
                                                            "converted to rotation_6d and normalised by min_max") !=
             std::string::npos);
  std::vector<ModalitySubKey> absolute = panda_state;
  absolute[1].absolute = true;
  const KeyTransformPlan plan = upstream_config_plan(panda, absolute, panda_action, "f.h5");
  BOOST_TEST((plan.state[1].normalization == NormalizationRule::min_max && plan.state[4].rotation_to == "rotation_6d"));
  std::vector<ModalitySubKey> integer_motion = panda_action;
  integer_motion[3].continuous = false;
  BOOST_TEST(refusal(panda, absolute, integer_motion) ==
             "f.h5: data.upstream_config = single_panda_gripper: action.base_motion is not continuous (modality.json's "
             "dtype), so upstream normalises it only by binary, not min_max");
}

BOOST_AUTO_TEST_CASE(the_loader_gives_each_sample_the_configs_transforms_and_the_checkpoint_records_them) {
  const PackedData data = droid_data(kDroidModality);
  const std::string path = write(data, "droid");
  const ModelConfig cfg = model(16, 8);
  Loader loader(MPI_COMM_WORLD, droid_deck(path), cfg);
  const int64_t steps = data.steps();
  int samples = 0, past_end = 0;
  for (int step = 0; step < 12; ++step)
    for (const PackedBatch& b : loader.next_step())
      for (int i = 0; i < b.n_samples; ++i, ++samples) {
        const float* state = &b.state[size_t(i * cfg.state_dim)];
        // The row: its position column, 2r/(S − 1) − 1.
        const int64_t r = std::lround((state[0] + 1.f) / 2.f * float(steps - 1));
        int64_t end = 0;
        for (int64_t e = 0; e < data.episodes(); ++e)
          if (r < data.episode_offsets[size_t(e + 1)]) {
            end = data.episode_offsets[size_t(e + 1)];
            break;
          }
        std::vector<float> want_state = model_state(r, steps);
        want_state.resize(size_t(cfg.state_dim), 0.f);
        check_near(state, want_state, str("row ", r, " state"));
        for (int64_t h = 0; h < cfg.horizon; ++h) {
          const size_t at = size_t((i * cfg.horizon + h) * cfg.action_dim);
          // Past the episode's end the absolute gripper repeats its last row, the relative deltas are 0.
          std::vector<float> want = model_action(std::min(r + h, end - 1));
          if (r + h >= end) std::fill(want.begin(), want.begin() + 6, 0.f), ++past_end;
          want.push_back(0.f);  // the dropped extra key
          check_near(&b.actions[at], want, str("row ", r, " action ", h));
          const std::vector<float> mask = {1, 1, 1, 1, 1, 1, 1, 0};  // the 7 columns the model predicts
          check_near(&b.action_mask[at], mask, str("row ", r, " mask ", h), 0.f);
        }
      }
  BOOST_TEST(samples == 48);
  BOOST_TEST(past_end > 0);

  const NormalizationStatistics recorded =
      statistics_from_json(nlohmann::json::parse(statistics_json(*loader.normalization()).dump()), "t");
  BOOST_TEST((recorded.at(0).key_transforms == loader.normalization()->at(0).key_transforms));
  BOOST_TEST(recorded.at(0).key_transforms.selected_by == "data.upstream_config = oxe_droid");
  BOOST_TEST(recorded.at(0).key_transforms.state[1].rotation_from == "quaternion");

  // embsim's policy: the observed raw state as the loader gave it, the model's actions back to the
  // task's raw layout (the gripper thresholded, the axis/angle as rpy, the dropped key 0).
  const PolicyNormalization policy(statistics_json(recorded).dump(), "ckpt.h5");
  policy.check(0, kStateWidth, kActionWidth);
  BOOST_TEST(policy.state_width(0, kStateWidth) == 10);
  for (int64_t r : {0, 7, int(steps - 1)}) {
    std::vector<float> raw_state(kStateWidth), raw_action(kActionWidth);
    raw_rows(r, raw_state.data(), raw_action.data());
    const std::vector<float> seen = policy.state(0, raw_state);
    BOOST_REQUIRE_EQUAL(seen.size(), 10u);
    check_near(seen.data(), model_state(r, steps), str("policy state of row ", r));
    std::vector<float> actions = model_action(r);
    actions.push_back(0.f);
    policy.unnormalize_actions(0, actions.data(), 1, kActionWidth, kActionWidth);
    raw_action[0] = r % 2 ? 1.f : 0.f, raw_action[7] = 0.f;
    check_near(actions.data(), raw_action, str("policy action of row ", r), 1e-5f);
  }
  BOOST_CHECK_EXCEPTION(policy.check(0, kStateWidth, 7), Error, [](const Error& e) {
    return std::string(e.what()).find("trained on per-key transformed actions of 8 columns; the task's action is 7") !=
           std::string::npos;
  });

  // A resumed run keeps the config it trained with.
  BOOST_TEST(test::input_error_message([&] { Loader(MPI_COMM_WORLD, droid_deck(path, "so100"), cfg, &recorded); }) ==
             "embodiment 0: the resumed checkpoint trained with data.upstream_config = oxe_droid, the deck has "
             "data.upstream_config = so100; resume with what it was trained on");
  BOOST_TEST(test::input_error_message([&] { Loader(MPI_COMM_WORLD, droid_deck(path, ""), cfg, &recorded); })
                 .find("the deck has neither data.upstream_config nor data.state_encoding = sin_cos") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_file_without_the_configs_keys_or_a_model_too_narrow_is_refused) {
  const std::string path = write(droid_data(kDroidModality), "droid_refusals");
  const std::string msg = test::input_error_message([&] { Loader(MPI_COMM_WORLD, droid_deck(path, "so100"), model(16, 8)); });
  BOOST_TEST(msg == path + ": data.upstream_config = so100: state.single_arm is not in the file (its state sub-keys: "
                           "extra, eef_rotation, eef_position, gripper_position); convert with embpack lerobot "
                           "--state-keys naming the config's keys",
             msg);
  // No extra state key: 8 raw columns, 10 as the model sees them.
  PackedData narrow = droid_data(
      R"({"state": {"eef_rotation": {"start": 0, "end": 4, "rotation_type": "quaternion"},)"
      R"( "eef_position": {"start": 4, "end": 7}, "gripper_position": {"start": 7, "end": 8}},)"
      R"( "action": {"gripper_position": {"start": 0, "end": 1},)"
      R"( "eef_rotation_delta": {"start": 1, "end": 4, "rotation_type": "euler_angles_rpy"},)"
      R"( "eef_position_delta": {"start": 4, "end": 7}, "extra": {"start": 7, "end": 8}}})");
  narrow.state_dim = 8;
  for (int32_t& width : narrow.embodiment_state_dim) width = 8;
  std::vector<float> state;
  for (int64_t r = 0; r < narrow.steps(); ++r)
    state.insert(state.end(), narrow.state.begin() + r * kStateWidth + 2, narrow.state.begin() + (r + 1) * kStateWidth);
  narrow.state = state;
  const std::string narrow_path = write(narrow, "droid_narrow");
  BOOST_TEST(test::input_error_message([&] { Loader(MPI_COMM_WORLD, droid_deck(narrow_path), model(9, 8)); }) ==
             "embodiment 0: its per-key transforms give the model 10 state columns, model.state_dim is 9; set "
             "model.state_dim to at least 10");
  // No modality attribute: the one key "state" is named.
  BOOST_TEST(test::input_error_message([&] { Loader(MPI_COMM_WORLD, droid_deck(write(droid_data(""), "droid_bare")),
                                                    model(16, 8)); })
                 .find("state.eef_position is not in the file (its state sub-keys: state)") != std::string::npos);
}

// A file of two embodiments has one modality attribute, of the wider one's columns; embpack
// synth gives embodiment 1 three quarters of them: 8 of 10 state columns, 6 of 8 action columns.
PackedData droid_two_embodiments() {
  SynthOptions o = test::tiny_synth("gr00t", 4, 11);
  o.state_dim = kStateWidth, o.action_dim = kActionWidth, o.embodiments = 2;
  PackedData p = synthesize(o);
  for (int64_t r = 0; r < p.steps(); ++r) raw_rows(r, &p.state[size_t(r * kStateWidth)], &p.action[size_t(r * kActionWidth)]);
  p.modality = kDroidModality;
  BOOST_REQUIRE((p.embodiment_state_dim == std::vector<int32_t>{10, 8}));
  BOOST_REQUIRE((p.embodiment_action_dim == std::vector<int32_t>{8, 6}));
  BOOST_REQUIRE((std::set<int32_t>(p.episode_embodiment.begin(), p.episode_embodiment.end()) == std::set<int32_t>{0, 1}));
  return p;
}

// oxe_droid's action keys read columns [0, 7): embodiment 1 has 6 (its state is checked after).
BOOST_AUTO_TEST_CASE(an_embodiment_narrower_than_the_configs_keys_is_refused_in_one_line) {
  const std::string path = write(droid_two_embodiments(), "droid_two_embodiments");
  const std::string refusal = path + ":/embodiments/action_dim: embodiment 1 has 6 action columns, "
                                    "data.upstream_config = oxe_droid needs 7 (its action keys' columns of the "
                                    "modality attribute); pack this embodiment in a file of its own";
  const std::string msg = test::input_error_message([&] { Loader(MPI_COMM_WORLD, droid_deck(path), model(16, 8)); });
  BOOST_TEST(msg == refusal, msg);
  // embtrain refuses it in its start checks, before it writes anything (not even the checkpoint folder).
  RunConfig run;
  run.model = model(16, 8), run.data = droid_deck(path);
  run.train.ckpt_dir = test::scratch_dir("upstream_data_config") + "/never_written";
  BOOST_TEST(test::input_error_message([&] { check_before_training(run, 1, 1); }) == refusal);
  BOOST_TEST(!std::filesystem::exists(run.train.ckpt_dir));
  // Without the config the narrower embodiment trains on its own columns.
  Loader plain(MPI_COMM_WORLD, droid_deck(path, ""), model(16, 8));
  BOOST_TEST(plain.next_step().size() > 0u);
}

// The state likewise: with every action column valid, embodiment 1's 8 state columns are short of
// the 10 oxe_droid's state keys read (its missing quaternion columns would be zeros, no rotation).
BOOST_AUTO_TEST_CASE(an_embodiment_with_fewer_state_columns_than_the_configs_keys_is_refused) {
  PackedData p = droid_two_embodiments();
  p.embodiment_action_dim = {8, 8};
  const std::string path = write(p, "droid_narrow_state");
  const std::string refusal = path + ":/embodiments/state_dim: embodiment 1 has 8 state columns, "
                                    "data.upstream_config = oxe_droid needs 10 (its state keys' columns of the "
                                    "modality attribute); pack this embodiment in a file of its own";
  BOOST_TEST(test::input_error_message([&] { Loader(MPI_COMM_WORLD, droid_deck(path), model(16, 8)); }) == refusal);
  RunConfig run;
  run.model = model(16, 8), run.data = droid_deck(path);
  BOOST_TEST(test::input_error_message([&] { check_before_training(run, 1, 1); }) == refusal);
  // data.state_encoding = sin_cos reads every state sub-key: the same columns, the same refusal.
  DataConfig sin_cos = droid_deck(path, "");
  sin_cos.state_sin_cos = true;
  BOOST_TEST(test::input_error_message([&] { Loader(MPI_COMM_WORLD, sin_cos, model(32, 8)); })
                 .find("embodiment 1 has 8 state columns, data.state_encoding = sin_cos needs 10") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_exports_metadata_describes_the_keys_as_trained) {
  const std::string path = write(droid_data(kDroidModality), "droid_export");
  RunConfig cfg;
  cfg.data = droid_deck(path);
  const std::string recorded = statistics_json(*Loader(MPI_COMM_WORLD, cfg.data, model(16, 8)).normalization()).dump();
  const nlohmann::json entry = metadata_entries(cfg, recorded, false).at("embodiment_0");
  // What upstream's StateActionTransform.set_metadata reads of the converted keys.
  BOOST_TEST(entry["modalities"]["state"]["eef_rotation"]["rotation_type"] == "quaternion");
  BOOST_TEST(entry["modalities"]["state"]["eef_rotation"]["shape"] == nlohmann::json({4}));
  BOOST_TEST(entry["modalities"]["action"]["eef_rotation_delta"]["rotation_type"] == "euler_angles_rpy");
  BOOST_TEST(entry["modalities"]["action"]["eef_rotation_delta"]["absolute"] == false);
  BOOST_TEST(entry["modalities"]["action"]["gripper_position"]["continuous"] == false);
  BOOST_TEST(entry["statistics"]["state"]["eef_position"]["min"] == nlohmann::json({0.0, 0.0, 0.5}));
  // The record names its config; a record of before that field (only selected_by's text) exports alike.
  nlohmann::json old_record = nlohmann::json::parse(recorded);
  BOOST_TEST(old_record["0"]["key_transforms"]["upstream_config"] == "oxe_droid");
  old_record["0"]["key_transforms"].erase("upstream_config");
  BOOST_TEST(metadata_entries(cfg, old_record.dump(), false).at("embodiment_0") == entry);
  // The same statistics over a file whose modality now declares the delta's angles in another order.
  std::string euler = kDroidModality;
  const std::string rpy = "euler_angles_rpy";
  euler.replace(euler.find(rpy), rpy.size(), "euler_angles_ypr");
  const std::string other = write(droid_data(euler), "droid_export_other");
  const std::string refusal = other + ": embodiment 0 (embodiment_0) trained with data.upstream_config = oxe_droid on "
                                      "other sub-keys, columns or rotation types than this file's modality attribute "
                                      "gives; metadata.json must describe the data it trained on: export with its "
                                      "deck and data";
  cfg.data.paths = {other};
  BOOST_TEST(test::input_error_message([&] { metadata_entries(cfg, recorded, false); }) == refusal);
  BOOST_TEST(test::input_error_message([&] { metadata_entries(cfg, old_record.dump(), false); }) == refusal);
  // The check keys on the recorded config, neither on the deck's nor on selected_by's text.
  nlohmann::json renamed = nlohmann::json::parse(recorded);
  renamed["0"]["key_transforms"]["selected_by"] = "oxe_droid (as a later deck may word it)";
  cfg.data.upstream_config = "";
  BOOST_TEST(test::input_error_message([&] { metadata_entries(cfg, renamed.dump(), false); }).find(
                 "trained with oxe_droid (as a later deck may word it) on other sub-keys") != std::string::npos);
  cfg.data.paths = {path};
  BOOST_TEST(metadata_entries(cfg, renamed.dump(), false).at("embodiment_0") == entry);
}

BOOST_AUTO_TEST_CASE(the_policy_transforms_a_state_wider_than_the_model_sees) {
  // A config that takes only the last two of five state columns, min_max by (0, 2) and (2, 4).
  EmbodimentStatistics e;
  for (const char* name : {"mean", "std", "q01", "q99"}) e.state.values[name] = std::vector<double>(5, 0.0);
  e.state.values["min"] = {0, 0, 0, 0, 2}, e.state.values["max"] = {1, 1, 1, 2, 4}, e.state.rows = 10;
  e.action = e.state;
  KeyTransform last;
  last.key = "last", last.start = 3, last.width = 2, last.normalization = NormalizationRule::min_max;
  e.key_transforms = {"data.upstream_config = so100", "so100", {last}, {}};
  const PolicyNormalization policy(statistics_json({{0, e}}).dump(), "ckpt.h5");
  BOOST_TEST(policy.state_width(0, 5) == 2);
  const std::vector<float> seen = policy.state(0, {9.f, 9.f, 9.f, 2.f, 3.f});
  BOOST_REQUIRE_EQUAL(seen.size(), 2u);
  check_near(seen.data(), {1.f, 0.f}, "the policy's state");
}
