// DreamZero's alignment of a sample's frames, actions and states with its episode's raw steps
// (DATA.md "DreamZero alignment"), the rule of upstream's DROID loader: block b's anchor is the
// clip frame just before its first one, its actions are the steps from the anchor on and its state
// the anchor's step. Checked on a synthetic DreamZero-layout file whose every per-step value is its
// step index, against values written out by hand from that rule.
#define BOOST_TEST_MODULE dreamzero_alignment
#include <boost/test/unit_test.hpp>

#include <array>
#include <map>
#include <vector>

#include "comm/world_fixture.hpp"
#include "data/dreamzero_alignment.hpp"
#include "data/loader.hpp"
#include "data_fixtures.hpp"

using namespace emb;

namespace {

// The layout under test: F = 4 latent frames (frame 0, then 3 blocks of 1), clips of T = 13 frames
// every 2nd step, 4 actions and 1 state per block.
constexpr int64_t kStride = 2, kF = 4, kBlocks = 3, kHa = 4, kActionDim = 2, kStateDim = 2;
constexpr int64_t kH = 4, kW = 4, kC = 4, kCond = 8, kClipRows = 2, kClipDim = 4;

ModelConfig dreamzero_model() {
  ModelConfig c = test::tiny_model(Family::wan);
  c.first_frame_block = true;
  c.latent_frames = int(kF), c.frames_per_block = 1, c.actions_per_block = int(kHa), c.states_per_block = 1;
  c.action_dim = int(kActionDim), c.state_dim = int(kStateDim);
  c.cond_channels = int(kCond), c.clip_tokens = int(kClipRows), c.d_clip = int(kClipDim);
  return c;
}

// Episodes of 30 and 10 steps. Step t: action (t, −t), state t + 0.5 (one column: the model's
// second is padding); its clip's latent frame j is t·F + j in every latent channel.
PackedData step_indexed_file() {
  test::DreamZeroLayout d;
  d.frames = kF, d.stride = kStride, d.height = kH, d.width = kW, d.channels = kC, d.cond = kCond;
  d.clip_rows = kClipRows, d.clip_dim = kClipDim;
  return test::dreamzero_layout_file(d, {30, 10}, 1, kActionDim, [](int64_t t, float* state, float* action) {
    action[0] = float(t), action[1] = -float(t);
    state[0] = float(t) + 0.5f;
  });
}

// What one sample read, by the step of its clip (the value of its latent frame 0 over F).
struct Seen {
  std::array<float, kF> latent_frames;
  std::vector<float> actions, states;  // column 0 of each action row, the state rows (Ns = 1)
  std::vector<float> second_columns;   // column 1 of each action row
  bool state_padding_zero = true;
};

std::map<int64_t, Seen> read_epoch(const std::string& path, bool repeat_end) {
  DataConfig dc;
  dc.dreamzero_repeat_end = repeat_end;
  dc.normalize = false;  // which raw steps a sample reads (test_data_normalization checks the normalisation)
  dc.paths = {path};
  dc.view = "dreamzero";
  dc.global_batch = repeat_end ? 8 : 2, dc.chunk_rows = 4, dc.shuffle_buffer = 16, dc.tokens_per_mb = 1 << 20, dc.prefetch = 0;
  const ModelConfig cfg = dreamzero_model();
  Loader loader(MPI_COMM_WORLD, dc, cfg);
  const int64_t video_per_sample = 2 * kF * (kH / 2) * (kW / 2) * (kC * 4), frame_values = (kH / 2) * (kW / 2) * kC * 4;
  std::map<int64_t, Seen> seen;
  for (int64_t k = 0; k < loader.samples_per_epoch() / dc.global_batch; ++k)
    for (const PackedBatch& b : loader.next_step())
      for (int64_t i = 0; i < b.n_samples; ++i) {
        Seen s;
        for (int64_t j = 0; j < kF; ++j) s.latent_frames[size_t(j)] = b.video_x0[size_t(i * video_per_sample + j * frame_values)];
        for (int64_t r = 0; r < kBlocks * kHa; ++r) {
          const float* a = &b.act_x0[size_t((i * kBlocks * kHa + r) * kActionDim)];
          s.actions.push_back(a[0]);
          s.second_columns.push_back(a[1]);
        }
        for (int64_t r = 0; r < kBlocks; ++r) {
          s.states.push_back(b.state[size_t((i * kBlocks + r) * kStateDim)]);
          s.state_padding_zero = s.state_padding_zero && b.state[size_t((i * kBlocks + r) * kStateDim + 1)] == 0.f;
        }
        seen[int64_t(s.latent_frames[0]) / kF] = s;
      }
  return seen;
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

// Clip frames (embpack features --dreamzero reads them): frame k of the clip at row is step
// row + 2k, the episode's last step past its end. Latent frame 0 ← frame 0, latent frame j ≥ 1 ←
// frames 4j − 3 .. 4j.
BOOST_AUTO_TEST_CASE(clip_frames_are_every_stride_th_step) {
  const std::vector<int64_t> row3 = {3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27};
  const std::vector<int64_t> row25 = {25, 27, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29};
  const std::vector<int64_t> row34 = {34, 36, 38, 39, 39, 39, 39, 39, 39, 39, 39, 39, 39};
  for (int64_t k = 0; k < 13; ++k) {
    BOOST_TEST(clip_frame_step(3, k, kStride, 30) == row3[size_t(k)]);
    BOOST_TEST(clip_frame_step(25, k, kStride, 30) == row25[size_t(k)]);
    BOOST_TEST(clip_frame_step(34, k, kStride, 40) == row34[size_t(k)]);
  }
}

// Block anchors in clip frames: with latent frame 0's own block, 4·b·fpb (upstream's chunk
// anchors 0, 24, 48, .. at fpb 2 and stride 3); without it, 0 then 4(b·fpb − 1).
BOOST_AUTO_TEST_CASE(block_anchor_is_the_frame_before_the_block) {
  ModelConfig cfg = dreamzero_model();
  cfg.frames_per_block = 2;
  BOOST_TEST(block_anchor_frame(0, cfg) == 0);
  BOOST_TEST(block_anchor_frame(1, cfg) == 8);
  BOOST_TEST(block_anchor_frame(3, cfg) == 24);
  cfg.first_frame_block = false;
  BOOST_TEST(block_anchor_frame(0, cfg) == 0);
  BOOST_TEST(block_anchor_frame(1, cfg) == 4);
  BOOST_TEST(block_anchor_frame(2, cfg) == 12);
}

namespace {

struct Expected {
  int64_t row;
  std::vector<float> actions, states;
};

void check_samples(const std::map<int64_t, Seen>& seen, const std::vector<Expected>& hand) {
  for (const Expected& e : hand) {
    BOOST_TEST_CONTEXT("sample at row " << e.row) {
      BOOST_REQUIRE(seen.count(e.row) == 1u);
      const Seen& s = seen.at(e.row);
      BOOST_TEST(s.actions == e.actions, boost::test_tools::per_element());
      BOOST_TEST(s.states == e.states, boost::test_tools::per_element());
      for (int64_t j = 0; j < kF; ++j) BOOST_TEST(s.latent_frames[size_t(j)] == float(e.row * kF + j));
    }
  }
  for (const auto& [row, s] : seen) {
    BOOST_TEST_CONTEXT("sample at row " << row) {
      for (size_t r = 0; r < s.actions.size(); ++r) BOOST_TEST(s.second_columns[r] == -s.actions[r]);
      BOOST_TEST(s.state_padding_zero);
    }
  }
}

std::string step_indexed_path(const std::string& name = "steps", const std::string& modality = "") {
  const std::string path = test::scratch_dir("dreamzero_alignment") + "/" + name + ".h5";
  PackedData p = step_indexed_file();
  p.modality = modality;
  write_packed(p, path, "test");
  return path;
}

}  // namespace

// Upstream's default (data.dreamzero_episode_end = skip): only steps whose window (clip frames up to
// row + 24, actions and states up to row + 19) fits in the episode are samples: rows 0 .. 5 of the
// 30-step episode, none of the 10-step one. Block b's anchor is clip frame 4b, step row + 8b: its 4
// actions are steps row + 8b .. row + 8b + 3 and its state step row + 8b. The latent frames are
// the clip's own.
BOOST_AUTO_TEST_CASE(loader_reads_upstream_rows_for_each_block) {
  const std::map<int64_t, Seen> seen = read_epoch(step_indexed_path(), false);
  std::vector<int64_t> rows;
  for (const auto& [row, s] : seen) rows.push_back(row);
  BOOST_TEST(rows == std::vector<int64_t>({0, 1, 2, 3, 4, 5}), boost::test_tools::per_element());
  check_samples(seen, {{0, {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19}, {0.5f, 8.5f, 16.5f}},
                       {3, {3, 4, 5, 6, 11, 12, 13, 14, 19, 20, 21, 22}, {3.5f, 11.5f, 19.5f}},
                       {5, {5, 6, 7, 8, 13, 14, 15, 16, 21, 22, 23, 24}, {5.5f, 13.5f, 21.5f}}});
}

// data.dreamzero_episode_end = repeat: every step is a sample, and steps past the episode's end
// read its last step.
BOOST_AUTO_TEST_CASE(repeat_end_reads_the_last_step_past_the_end) {
  const std::map<int64_t, Seen> seen = read_epoch(step_indexed_path(), true);
  BOOST_TEST(seen.size() == 40u);
  check_samples(seen, {
      {3, {3, 4, 5, 6, 11, 12, 13, 14, 19, 20, 21, 22}, {3.5f, 11.5f, 19.5f}},
      {25, {25, 26, 27, 28, 29, 29, 29, 29, 29, 29, 29, 29}, {25.5f, 29.5f, 29.5f}},
      {34, {34, 35, 36, 37, 39, 39, 39, 39, 39, 39, 39, 39}, {34.5f, 39.5f, 39.5f}},
  });
}

// A sub-key the modality marks absolute = false is 0 past the episode's end, in the actions and in
// the blocks' states, as DreamZero's loader pads it ("zero" padding where the key is not absolute;
// the absolute ones repeat the last step). Action column 0 absolute, column 1 relative; the state
// relative.
BOOST_AUTO_TEST_CASE(relative_keys_are_zero_past_the_end) {
  const std::string modality =
      R"({"state": {"joint": {"start": 0, "end": 1, "absolute": false}},)"
      R"( "action": {"position": {"start": 0, "end": 1}, "delta": {"start": 1, "end": 2, "absolute": false}}})";
  const std::map<int64_t, Seen> seen = read_epoch(step_indexed_path("relative", modality), true);
  BOOST_REQUIRE(seen.count(3) == 1u && seen.count(25) == 1u);
  const Seen& inside = seen.at(3);  // every step inside the 30-step episode: as without the modality
  BOOST_TEST(inside.actions == std::vector<float>({3, 4, 5, 6, 11, 12, 13, 14, 19, 20, 21, 22}),
             boost::test_tools::per_element());
  BOOST_TEST(inside.second_columns == std::vector<float>({-3, -4, -5, -6, -11, -12, -13, -14, -19, -20, -21, -22}),
             boost::test_tools::per_element());
  BOOST_TEST(inside.states == std::vector<float>({3.5f, 11.5f, 19.5f}), boost::test_tools::per_element());
  // Row 25: block 0 reads steps 25 .. 29 and 30 past the end; blocks 1 and 2 start past it.
  const Seen& past = seen.at(25);
  BOOST_TEST(past.actions == std::vector<float>({25, 26, 27, 28, 29, 29, 29, 29, 29, 29, 29, 29}),
             boost::test_tools::per_element());
  BOOST_TEST(past.second_columns == std::vector<float>({-25, -26, -27, -28, 0, 0, 0, 0, 0, 0, 0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(past.states == std::vector<float>({25.5f, 0, 0}), boost::test_tools::per_element());
}
