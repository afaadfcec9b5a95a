// DreamZero's relative actions (data.relative_action_keys, data/relative_actions.hpp; DATA.md
// "DreamZero alignment" (2)): embpack's /stats/action_relative over every chunk minus its first
// state, the loader's relative and q99-normalised block actions, the checkpoint record, and the
// round trip back to absolute actions through embsim's PolicyNormalization, on a tiny file whose
// values are written out by hand:
//   state  t: joint_position (t, 10t), gripper_position 0.5
//   action t: joint_position (t + 1, 10t + 5), gripper_position t mod 2
// so a chunk anchored at i has relative joint_position actions (k + 1, 10k + 5) for k = 0 .. 3,
// whatever i (a chunk's own step instead of its anchor would give (1, 5) throughout).
#define BOOST_TEST_MODULE relative_actions
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "comm/world_fixture.hpp"
#include "core/error.hpp"
#include "data/loader.hpp"
#include "data/packed_format.hpp"
#include "data/relative_actions.hpp"
#include "data_fixtures.hpp"
#include "rl/roles/policy_normalization.hpp"

using namespace emb;

namespace {

constexpr int64_t kHa = 4, kBlocks = 3, kDim = 3;  // 4-step chunks, 3 blocks of 1 latent frame
const std::vector<std::string> kJoint = {"joint_position"};
const char* kModality =
    R"({"state": {"joint_position": {"start": 0, "end": 2}, "gripper_position": {"start": 2, "end": 3}},)"
    R"( "action": {"joint_position": {"start": 0, "end": 2}, "gripper_position": {"start": 2, "end": 3}}})";

ModelConfig relative_model() {
  ModelConfig c = test::tiny_model(Family::wan);
  c.first_frame_block = true;
  c.latent_frames = 4, c.frames_per_block = 1, c.actions_per_block = int(kHa), c.states_per_block = 1;
  c.action_dim = int(kDim), c.state_dim = int(kDim);
  c.cond_channels = 8, c.clip_tokens = 2, c.d_clip = 4;
  return c;
}

// Episodes of 30 and 10 steps (27 and 7 chunks of 4), the stats written for `keys` (none: no
// /stats/action_relative) over `chunk`-step chunks.
std::string relative_file(const std::string& name, const std::vector<std::string>& keys, int64_t chunk,
                          const std::string& modality = kModality) {
  PackedData p = test::dreamzero_layout_file(test::DreamZeroLayout{}, {30, 10}, kDim, kDim,
                                             [](int64_t t, float* state, float* action) {
                                               const int64_t step = t < 30 ? t : t - 30;
                                               state[0] = float(step), state[1] = 10.f * float(step), state[2] = 0.5f;
                                               action[0] = float(step + 1), action[1] = 10.f * float(step) + 5.f;
                                               action[2] = float(step % 2);
                                             });
  p.modality = modality;
  p.relative_action_keys = keys, p.relative_action_chunk = chunk;
  const std::string path = test::scratch_dir("relative_actions") + "/" + name + ".h5";
  write_packed(p, path, "test");
  return path;
}

DataConfig relative_data(const std::string& path) {
  DataConfig dc;
  dc.paths = {path};
  dc.view = "dreamzero";
  dc.relative_action_keys = kJoint;
  dc.global_batch = 1, dc.chunk_rows = 4, dc.shuffle_buffer = 4, dc.tokens_per_mb = 1 << 20, dc.prefetch = 0;
  return dc;
}

std::vector<float> read_stat(const H5File& f, const std::string& group, const char* name) {
  return f.read_all<float>(str(group, "/", name));
}

void check_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-6f) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) BOOST_TEST(std::fabs(got[i] - want[i]) <= tol, "at " << i << ": " << got[i] << " vs " << want[i]);
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

// 34 chunks × 4 rows: joint_position's columns are {1, 2, 3, 4} and {5, 15, 25, 35}, 34 of each:
// mean 2.5 / 20, std sqrt(1.25) / sqrt(125), q01 and q99 (numpy's linear quantile at 1.35 and
// 134.65 of 136 sorted values) the smallest and the largest; gripper_position keeps /stats/action's.
BOOST_AUTO_TEST_CASE(embpack_writes_the_relative_chunks_statistics) {
  const H5File f = H5File::open(relative_file("stats", kJoint, kHa));
  const std::string rel = packed::kActionRelativeStats;
  BOOST_TEST(f.attr_string(rel, packed::kRelativeKeys) == "joint_position");
  BOOST_TEST(f.attr_double(rel, packed::kRelativeChunk) == 4.0);
  const std::vector<float> absolute_min = read_stat(f, "/stats/action", "min"), absolute_q99 = read_stat(f, "/stats/action", "q99");
  check_near(read_stat(f, rel, "mean"), {2.5f, 20.f, read_stat(f, "/stats/action", "mean")[2]});
  check_near(read_stat(f, rel, "std"), {std::sqrt(1.25f), std::sqrt(125.f), read_stat(f, "/stats/action", "std")[2]}, 1e-5f);
  check_near(read_stat(f, rel, "min"), {1.f, 5.f, absolute_min[2]});
  check_near(read_stat(f, rel, "max"), {4.f, 35.f, 1.f});
  check_near(read_stat(f, rel, "q01"), {1.f, 5.f, 0.f});
  check_near(read_stat(f, rel, "q99"), {4.f, 35.f, absolute_q99[2]});
  BOOST_TEST(absolute_q99[2] == 1.f);
  BOOST_TEST(read_stat(f, "/stats/action", "max")[0] == 30.f);  // the absolute ones are unchanged
}

// Block b of the sample at row 0 is anchored at step 8b (clip frame 4b, stride 2): its rows are
// steps 8b .. 8b + 3, joint_position relative (k + 1, 10k + 5) -> q99 over [1, 4] and [5, 35]:
// -1, -1/3, 1/3, 1; gripper t mod 2 over [0, 1]: -1, 1, -1, 1. The states stay absolute.
BOOST_AUTO_TEST_CASE(loader_feeds_relative_normalised_block_actions_and_policy_adds_the_state_back) {
  const std::string path = relative_file("loader", kJoint, kHa);
  const ModelConfig cfg = relative_model();
  Loader loader(MPI_COMM_WORLD, relative_data(path), cfg);
  const std::vector<float> ramp = {-1.f, -1.f / 3.f, 1.f / 3.f, 1.f};
  bool found = false;
  for (int64_t step = 0; step < loader.samples_per_epoch() && !found; ++step)
    for (const PackedBatch& b : loader.next_step()) {
      if (b.n_samples == 0 || b.act_x0[2] != -1.f || b.state[0] != -1.f) continue;  // row 0: state 0 is q01
      found = true;
      for (int64_t blk = 0; blk < kBlocks; ++blk)
        for (int64_t k = 0; k < kHa; ++k) {
          const float* a = &b.act_x0[size_t((blk * kHa + k) * kDim)];
          check_near({a[0], a[1], a[2]}, {ramp[size_t(k)], ramp[size_t(k)], k % 2 ? 1.f : -1.f});
        }
    }
  BOOST_TEST(found);
  const NormalizationStatistics& stats = *loader.normalization();
  const RelativeActions want = {{"joint_position", 0, 0, 2}};
  BOOST_TEST((stats.at(0).relative_action == want));
  // The checkpoint's record and embsim's policy: block 1 (anchor step 8, state (8, 80, 0.5)) un-normalised
  // (its bounds are min = q01 and max = q99 here) and made absolute gives the raw actions of steps 8 .. 11.
  const std::string record = statistics_json(stats).dump();
  BOOST_TEST((statistics_from_json(nlohmann::json::parse(record), "ckpt").at(0).relative_action == want));
  const PolicyNormalization policy(record, "ckpt.h5");
  std::vector<float> rows;
  for (int64_t k = 0; k < kHa; ++k) rows.insert(rows.end(), {ramp[size_t(k)], ramp[size_t(k)], k % 2 ? 1.f : -1.f});
  policy.unnormalize_actions(0, rows.data(), kHa, kDim, kDim);
  policy.add_observed_state(0, {8.f, 80.f, 0.5f}, rows.data(), kHa, kDim);
  check_near(rows, {9, 85, 0, 10, 95, 1, 11, 105, 0, 12, 115, 1}, 1e-4f);
}

BOOST_AUTO_TEST_CASE(absolute_runs_record_no_relative_columns) {
  DataConfig dc = relative_data(relative_file("absolute", {}, 0));
  dc.relative_action_keys.clear();
  Loader loader(MPI_COMM_WORLD, dc, relative_model());
  BOOST_TEST(loader.normalization()->at(0).relative_action.empty());
  BOOST_TEST(statistics_json(*loader.normalization()).dump().find("relative_action") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(files_without_what_relative_actions_need_are_refused_in_one_line) {
  const std::string plain = relative_file("plain", {}, 0);
  const std::string missing =
      test::input_error_message([&] { Loader(MPI_COMM_WORLD, relative_data(plain), relative_model()); });
  BOOST_TEST(missing.find(plain + ":/stats/action_relative: missing; data.relative_action_keys = joint_position") == 0u,
             missing);
  BOOST_TEST(missing.find("with --relative-actions joint_position --relative-chunk 4") != std::string::npos, missing);
  BOOST_TEST(missing.find('\n') == std::string::npos);

  const std::string other_chunk = relative_file("chunk8", kJoint, 8);
  const std::string chunk =
      test::input_error_message([&] { Loader(MPI_COMM_WORLD, relative_data(other_chunk), relative_model()); });
  BOOST_TEST(chunk.find("holds them for keys joint_position over 8-step chunks") != std::string::npos, chunk);

  const std::string no_partner =
      R"({"state": {"joint_position": {"start": 0, "end": 2}}, "action": {"joint_position": {"start": 0, "end": 2},)"
      R"( "gripper_position": {"start": 2, "end": 3}}})";
  const std::string gripper =
      test::input_error_message([&] { relative_file("gripper", {"gripper_position"}, kHa, no_partner); });
  BOOST_TEST(gripper.find("modality attribute: relative action key 'gripper_position': action.gripper_position has no state "
                          "partner state.gripper_position") != std::string::npos,
             gripper);
  BOOST_TEST(gripper.find("gripper.h5") != std::string::npos, gripper);
}
