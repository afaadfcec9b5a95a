// The policy embsim evaluates computes its observations' vl rows with the encoder its
// checkpoint's features came from (tools/embsim/checkpoint_vl.hpp, issue 33). On the fixtures'
// file (two views) and the tiny upstream-format backbone with the real tokenizer:
//  - a train.tune_visual checkpoint is evaluated with its own tuned vision tower and mlp1: its
//    vl rows differ from the untuned backbone's and equal those of the trained path
//    (TunedBackbone::vl_rows) run on the tuned tensors read from the checkpoint, on frames and a
//    prompt prepared here as GR00T's eval pipeline does;
//  - `embsim rl` refuses it (RL trains the head only);
//  - a checkpoint trained on offline `embpack features` (data.vl_backbone unset) is evaluated
//    with the backbone the files record, whose rows are the frozen backbone's;
//  - the views go to the backbone in the order training gave them, whatever the rendering order;
//    views it was not trained on are refused;
//  - the checkpoint records that backbone: with the training file gone it is still the one
//    used; when its folder is gone, the policy is refused in one line naming the record and the
//    key to set, rather than falling back to the stand-in encoder; a checkpoint without the
//    record (older) is decided from the training files as before;
//  (a checkpoint of stand-in features keeps the stand-in encoder: tests/sim/test_embsim.cpp).
#define BOOST_TEST_MODULE test_policy_backbone
#include <boost/test/unit_test.hpp>

#include <hdf5.h>

#include <cmath>
#include <filesystem>

#include "eagle_fixtures.hpp"
#include "encoders/eagle/frame_transform.hpp"
#include "checkpoint/checkpoint_dir.hpp"
#include "gr00t_policy.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "rl/mpi_fixture.hpp"
#include "rl_observer.hpp"
#include "train/online_backbone.hpp"
#include "train/tuned_backbone.hpp"

using namespace emb;
using namespace emb::test;

namespace {

BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

constexpr int64_t kH = 48, kW = 64;
const std::string kInstruction = kTasks[0];

// Two views of random frames, as the renderer gives them.
std::vector<std::vector<uint8_t>> frames() {
  std::vector<std::vector<uint8_t>> out(2, std::vector<uint8_t>(size_t(kH * kW * 3)));
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& f : out)
    for (uint8_t& b : f) b = uint8_t(byte(gen));
  return out;
}

// The policy's rows of frames() (views front, wrist, as the fixture's file), rendered in the
// file's order or the other way round.
std::vector<float> policy_rows(Gr00tPolicy& policy, bool swapped = false) {
  ObservationOptions o;
  o.views = {"front", "wrist"};
  std::vector<std::vector<uint8_t>> rendered = frames();
  if (swapped) std::swap(o.views[0], o.views[1]), std::swap(rendered[0], rendered[1]);
  std::vector<uint16_t> rows;
  policy.make_vl_encoder(o)->encode(rendered, int(kH), int(kW), kInstruction, rows);
  std::vector<float> out(rows.size());
  half_to_float(rows.data(), out.data(), int64_t(rows.size()));
  return out;
}

// GR00T's eval inputs of frames() and kInstruction for the backbone of mc.
std::vector<float> eval_patch_rows(const encoders::EagleDims& d) {
  std::vector<uint8_t> stacked;
  for (const auto& f : frames()) stacked.insert(stacked.end(), f.begin(), f.end());
  const std::vector<uint8_t> u8 = encoders::gr00t_frames(stacked.data(), 2, kH, kW, d.image_size, nullptr, "test");
  std::vector<float> rows(size_t(2 * d.tokens_per_image() * d.patch_features()));
  encoders::eagle_patch_rows(u8.data(), 2, d.image_size, d.patch, rows.data());
  return rows;
}

std::vector<float> rounded_to_half(const std::vector<float>& v) {
  std::vector<float> out;
  for (float x : v) out.push_back(half_to_float(float_to_half(x)));
  return out;
}

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  BOOST_TEST_REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

std::string trained(const std::string& dir, const std::string& name, const std::string& data,
                    const std::string& extra) {
  const ToolResult r = run_tool(train_command(dir, name, data, extra + " --set train.ckpt_every=3", 3), dir);
  BOOST_TEST_REQUIRE(r.code == 0, name << ": " << r.out << r.err);
  return verified_checkpoints(dir + "/ckpt_" + name, CheckedTensors::parameters, 1).front();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_tune_visual_checkpoint_is_evaluated_with_its_tuned_vision_tower) {
  const std::string dir = make_temp_dir("policy_tuned");
  const std::string data = dir + "/in.h5";
  write_packed(dataset(kH, kW), data, "test");
  // Large early steps, so the tuned tensors move well past fp16 rounding of the rows.
  const std::string ckpt = trained(dir, "tuned", data, online_flags(false) + " --set train.tune_visual=on"
                                   " --set train.lr=0.01 --set train.warmup_steps=0");
  Gr00tPolicy policy(ckpt, {}, 1, 0);
  BOOST_TEST_REQUIRE(int(policy.vl_source().kind) == int(CheckpointVl::Kind::tuned_eagle));
  const std::vector<float> got = policy_rows(policy);

  const ModelConfig& mc = policy.config();
  const encoders::EagleDims d = online_backbone_dims(mc);
  const std::vector<float> patches = eval_patch_rows(d);
  const std::vector<encoders::EagleSample> samples{{online_prompt(mc)(kInstruction, 2), 2}};
  CpuOps cpu;
  encoders::EagleBackbone untuned(cpu, d, WeightSource(tiny().checkpoint), DType::f32);
  const std::vector<float> frozen = rounded_to_half(untuned.features(samples, patches.data()));
  BOOST_TEST(max_difference(got, frozen) > 1e-2, "the evaluated rows are the untuned backbone's");

  // The tuned tensors as the checkpoint stores them, through the trained path's forward.
  const int64_t first = make_model(mc, nullptr)->params().get(mc.trained_context.front().name).offset;
  const std::vector<float> tuned(policy.params().begin() + first,
                                 policy.params().begin() + first + encoders::vision_tower_elements(d));
  BOOST_TEST(tuned != tuned_backbone_values(mc), "training left the vision tower as it was");
  TunedBackbone reference(cpu, mc, 0);
  const std::vector<float> expected =
      rounded_to_half(encoders::download(cpu, reference.vl_rows(tuned.data(), samples, patches.data())));
  BOOST_TEST(max_difference(got, expected) == 0.0);

  try {  // RL trains the head only: its rollouts would keep a vision tower its trainer drops
    rl_vl_observer(ObservationOptions{}, policy.vl_source(), mc);
    BOOST_FAIL("embsim rl accepted a tune_visual checkpoint");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("RL trains the action head only") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(offline_features_are_evaluated_with_the_backbone_the_files_record) {
  const std::string dir = make_temp_dir("policy_offline");
  write_packed(dataset(kH, kW), dir + "/in.h5", "test");
  const ToolResult packed = run_tool(features_command(dir + "/in.h5", dir + "/eagle.h5"), dir);
  BOOST_TEST_REQUIRE(packed.code == 0, packed.err);
  const std::string ckpt = trained(dir, "offline", dir + "/eagle.h5", "");
  Gr00tPolicy policy(ckpt, {}, 1, 0);
  BOOST_TEST_REQUIRE(int(policy.vl_source().kind) == int(CheckpointVl::Kind::eagle));
  BOOST_TEST(policy.vl_source().backbone_dir == tiny().checkpoint);
  const ModelConfig mc = with_backbone_of(policy.vl_source(), policy.config());
  const encoders::EagleDims d = online_backbone_dims(mc);
  const std::vector<float> patches = eval_patch_rows(d);
  CpuOps cpu;
  encoders::EagleBackbone backbone(cpu, d, WeightSource(tiny().checkpoint), DType::f32);
  const std::vector<float> expected =
      rounded_to_half(backbone.features({{online_prompt(mc)(kInstruction, 2), 2}}, patches.data()));
  BOOST_TEST(max_difference(policy_rows(policy), expected) == 0.0);
  BOOST_TEST(max_difference(policy_rows(policy, true), expected) == 0.0, "views rendered in another order");
  try {
    policy.make_vl_encoder(ObservationOptions{});  // top, front
    BOOST_FAIL("views the backbone was not trained on were accepted");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("trained on views front,wrist; the rendered views (--views) are top,front") !=
                   std::string::npos,
               e.what());
  }

  // The training file is gone: the checkpoint's own record still names the backbone (before
  // checkpoints recorded it, this fell back to the stand-in encoder's rows).
  std::filesystem::rename(dir + "/eagle.h5", dir + "/gone.h5");
  Gr00tPolicy recorded(ckpt, {}, 1, 0);
  BOOST_TEST(int(recorded.vl_source().kind) == int(CheckpointVl::Kind::eagle));
  BOOST_TEST(recorded.vl_source().backbone_dir == tiny().checkpoint);
  BOOST_TEST(recorded.vl_source().evidence == "recorded in the checkpoint");
  BOOST_TEST(max_difference(policy_rows(recorded), expected) == 0.0);

  // The backbone is not where --set (or the record) says: one line, what was recorded and the key.
  try {
    Gr00tPolicy refused(ckpt, {str("data.vl_backbone=", dir, "/moved")}, 1, 0);
    BOOST_FAIL("a checkpoint of Eagle features without its backbone was accepted");
  } catch (const Error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find(str("trained on the features of Eagle backbone ", tiny().checkpoint, " (digest ")) !=
                   std::string::npos,
               what);
    BOOST_TEST(what.find(str(dir, "/moved is not there: name the folder holding that backbone with --set "
                              "data.vl_backbone=DIR")) != std::string::npos,
               what);
    BOOST_TEST(what.find('\n') == std::string::npos);
  }

  // A checkpoint without the record (older ones): decided from the training files still there,
  // as before (a warning line); with them gone, the stand-in encoder.
  const hid_t f = H5Fopen(ckpt.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(f >= 0);
  BOOST_REQUIRE(H5Adelete(f, "vl_features") >= 0);
  H5Fclose(f);
  Gr00tPolicy legacy(ckpt, {}, 1, 0);
  BOOST_TEST(int(legacy.vl_source().kind) == int(CheckpointVl::Kind::stand_in));
  Gr00tPolicy named(ckpt, {str("data.vl_backbone=", tiny().checkpoint)}, 1, 0);
  BOOST_TEST(int(named.vl_source().kind) == int(CheckpointVl::Kind::eagle));
}
