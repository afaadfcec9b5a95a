// GR00T's sin/cos state encoding (data.state_encoding = sin_cos, data/state_sin_cos.hpp; upstream's
// StateActionSinCosTransform of fourier_gr1_arms_only): the encoding of a row by hand, the state's
// sub-keys from a packed file's modality attribute, the loader's samples of a file whose every
// row holds one known state, the checkpoint's record, and embsim's PolicyNormalization giving a
// policy the same encoded state.
#define BOOST_TEST_MODULE state_sin_cos
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "comm/world_fixture.hpp"
#include "core/error.hpp"
#include "data/loader.hpp"
#include "data/state_action_normalization.hpp"
#include "data/state_sin_cos.hpp"
#include "data_fixtures.hpp"
#include "rl/roles/policy_normalization.hpp"

using namespace emb;

namespace {

// Two sub-keys listed out of column order (the attribute's JSON object sorts them by name).
const char* kTwoKeys = R"({"state": {"z_arm": {"start": 0, "end": 3}, "a_hand": {"start": 3, "end": 5}},)"
                       R"( "action": {"z_arm": {"start": 0, "end": 3}, "a_hand": {"start": 3, "end": 5}}})";

// The state of every row of the test files: 5 joint angles.
const std::vector<float> kJointAngles = {0.f, 0.5f, -1.25f, 2.f, 3.1f};

// [sin(K), cos(K)] per sub-key of `widths`, as upstream concatenates them, then zeros to `stride`.
std::vector<float> encoded(const std::vector<float>& state, const std::vector<int64_t>& widths, size_t stride) {
  std::vector<float> out;
  size_t at = 0;
  for (int64_t w : widths) {
    for (int64_t j = 0; j < w; ++j) out.push_back(std::sin(state[at + size_t(j)]));
    for (int64_t j = 0; j < w; ++j) out.push_back(std::cos(state[at + size_t(j)]));
    at += size_t(w);
  }
  out.resize(stride, 0.f);
  return out;
}

// The sub-keys' widths of a file's state, in column order.
std::vector<int64_t> state_widths(const std::string& path) {
  std::vector<int64_t> widths;
  for (const ModalitySubKey& k : modality_sub_keys(H5File::open(path), "state")) widths.push_back(k.end - k.start);
  return widths;
}

// The sin/cos transforms of a state of consecutive sub-keys of `widths` (no statistics needed).
std::vector<BoundKeyTransform> sin_cos_keys(const std::vector<int64_t>& widths) {
  std::vector<ModalitySubKey> keys;
  for (int64_t w : widths) {
    const int64_t start = keys.empty() ? 0 : keys.back().end;
    keys.push_back({str("k", keys.size()), start, start + w, true, true, ""});
  }
  std::vector<BoundKeyTransform> bound;
  for (const KeyTransform& k : state_sin_cos_plan(keys).state) bound.push_back({k, {}});
  return bound;
}

void check_near(const std::vector<float>& got, const std::vector<float>& want) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_TEST(std::fabs(got[i] - want[i]) <= 1e-6f, "at " << i << ": " << got[i] << " vs " << want[i]);
}

// A gr00t file of 3 episodes whose every row's state is kJointAngles, with `modality` ("" = none).
std::string file_with(const std::string& name, const std::string& modality) {
  SynthOptions o = test::tiny_synth("gr00t", 3, 7);
  o.state_dim = int(kJointAngles.size()), o.action_dim = 5;
  PackedData p = synthesize(o);
  for (int64_t r = 0; r < p.steps(); ++r)
    std::copy(kJointAngles.begin(), kJointAngles.end(), p.state.begin() + r * p.state_dim);
  // Every row holds all the angles, so every embodiment has every state column (synth gives the
  // others fewer: a narrower one is refused, test_upstream_data_config).
  std::fill(p.embodiment_state_dim.begin(), p.embodiment_state_dim.end(), int32_t(p.state_dim));
  p.modality = modality;
  const std::string path = test::scratch_dir("state_sin_cos") + "/" + name + ".h5";
  write_packed(p, path, "test");
  return path;
}

ModelConfig model(int state_dim) {
  ModelConfig c = test::tiny_model(Family::gr00t);
  c.state_dim = state_dim, c.action_dim = 5;
  return c;
}

DataConfig sin_cos_data(const std::string& path) {
  DataConfig dc;
  dc.paths = {path};
  dc.state_sin_cos = true;
  dc.global_batch = 4, dc.chunk_rows = 8, dc.shuffle_buffer = 16, dc.tokens_per_mb = 1 << 20, dc.prefetch = 0;
  return dc;
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

BOOST_AUTO_TEST_CASE(each_sub_key_becomes_its_sines_then_its_cosines) {
  // Two rows of stride 8 holding a 3-wide state of sub-keys 2 and 1.
  std::vector<float> rows = {0.f, 1.5707964f, 3.1415927f, 0, 0, 0, 0, 0, 1.f, -1.f, 0.25f, 0, 0, 0, 0, 0};
  transform_key_rows(sin_cos_keys({2, 1}), rows.data(), 2, 8, 3);
  check_near({rows.begin(), rows.begin() + 8}, {0.f, 1.f, 1.f, 0.f, 0.f, -1.f, 0.f, 0.f});
  check_near({rows.begin() + 8, rows.end()},
             {std::sin(1.f), std::sin(-1.f), std::cos(1.f), std::cos(-1.f), std::sin(0.25f), std::cos(0.25f), 0.f,
              0.f});
  std::vector<float> narrow(5, 0.f);
  BOOST_CHECK_THROW(transform_key_rows(sin_cos_keys({3}), narrow.data(), 1, 5, 3), Error);  // 6 columns do not fit 5
}

BOOST_AUTO_TEST_CASE(sub_keys_come_from_the_modality_attribute_in_column_order) {
  BOOST_TEST(state_widths(file_with("two_keys", kTwoKeys)) == std::vector<int64_t>({3, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(state_widths(file_with("no_modality", "")) == std::vector<int64_t>({5}), boost::test_tools::per_element());
  const std::string gap = R"({"state": {"a": {"start": 0, "end": 2}, "b": {"start": 3, "end": 5}}, "action": {}})";
  const std::string msg = test::input_error_message([&] { state_widths(file_with("gap", gap)); });
  BOOST_TEST(msg.find("gap.h5:/: modality attribute: its state sub-keys do not tile the state's columns") !=
             std::string::npos, msg);
  const std::string short_keys = R"({"state": {"a": {"start": 0, "end": 4}}, "action": {}})";
  BOOST_TEST(test::input_error_message([&] { state_widths(file_with("short", short_keys)); })
                 .find("its state sub-keys cover 4 columns, /steps/state has 5") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_loader_gives_the_model_encoded_states_and_the_checkpoint_records_them) {
  const ModelConfig cfg = model(12);
  const std::string path = file_with("loader", kTwoKeys);
  Loader loader(MPI_COMM_WORLD, sin_cos_data(path), cfg);
  const std::vector<float> want = encoded(kJointAngles, {3, 2}, 12);
  int samples = 0;
  for (int step = 0; step < 3; ++step)
    for (const PackedBatch& b : loader.next_step())
      for (int i = 0; i < b.n_samples; ++i, ++samples)
        check_near({b.state.begin() + i * cfg.state_dim, b.state.begin() + (i + 1) * cfg.state_dim}, want);
  BOOST_TEST(samples == 12);
  const NormalizationStatistics recorded =
      statistics_from_json(nlohmann::json::parse(statistics_json(*loader.normalization()).dump()), "t");
  std::vector<int64_t> recorded_widths;
  for (const KeyTransform& k : recorded.at(0).key_transforms.state) {
    BOOST_TEST(k.sin_cos);
    recorded_widths.push_back(k.width);
  }
  BOOST_TEST(recorded_widths == std::vector<int64_t>({3, 2}), boost::test_tools::per_element());
  BOOST_TEST(recorded.at(0).key_transforms.action.empty());  // actions min/max per column as before
  // A checkpoint of before the per-key record holds the widths as "state_sin_cos": it reads as the same plan.
  nlohmann::json older = statistics_json(recorded);
  older["0"].erase("key_transforms");
  older["0"]["state_sin_cos"] = {3, 2};
  const KeyTransformPlan read_back = statistics_from_json(older, "old.h5").at(0).key_transforms;
  BOOST_TEST(read_back.selected_by == "data.state_encoding = sin_cos");
  BOOST_REQUIRE_EQUAL(read_back.state.size(), 2u);
  BOOST_TEST((read_back.state[1].start == 3 && read_back.state[1].width == 2 && read_back.state[1].sin_cos));

  // embsim's policy sees the state the loader gave the model.
  const PolicyNormalization policy(statistics_json(recorded).dump(), "ckpt.h5");
  BOOST_TEST(policy.state_width(0, 5) == 10);
  check_near(policy.state(0, kJointAngles), encoded(kJointAngles, {3, 2}, 10));
  BOOST_CHECK_EXCEPTION(policy.check(0, 4, 5), Error, [](const Error& e) {
    return std::string(e.what()).find("trained on per-key transformed states of 5 columns; the task's state is 4") !=
           std::string::npos;
  });

  // A resumed run keeps the encoding it trained with.
  DataConfig min_max = sin_cos_data(path);
  min_max.state_sin_cos = false;
  BOOST_TEST(test::input_error_message([&] { Loader(MPI_COMM_WORLD, min_max, cfg, &recorded); })
                 .find("trained with data.state_encoding = sin_cos, the deck has neither data.upstream_config nor "
                       "data.state_encoding = sin_cos") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_state_dim_narrower_than_twice_the_state_is_refused) {
  const std::string msg =
      test::input_error_message([&] { Loader(MPI_COMM_WORLD, sin_cos_data(file_with("narrow", kTwoKeys)), model(8)); });
  BOOST_TEST(msg.find("embodiment 0: its per-key transforms give the model 10 state columns, model.state_dim is 8; "
                      "set model.state_dim to at least 10") != std::string::npos,
             msg);
}
