// `embpack features --backbone` (issue 33) and training's check of who made the features
// (data.vl_backbone): a packed gr00t file with two camera views and three
// episodes of two tasks gets the vl features of a tiny random upstream-format backbone with the
// real Eagle 2.5 tokenizer; the rows equal the backbone run in-process on the same frames and
// prompts (to the fp16 the file stores), the provenance attributes say what made them, two and
// three ranks write the same file as one, and bad input (a missing tokenizer file, an unknown
// special token, frames of another size or channel count, a backbone whose width disagrees with
// the head's backbone_embedding_dim, a missing tensor) is one line, exit 2, and no file.
#define BOOST_TEST_MODULE test_embpack_features
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "core/half.hpp"
#include "data/packed_dataset.hpp"
#include "data/packed_format.hpp"
#include "encoders/eagle/eagle_backbone.hpp"
#include "encoders/eagle/frame_transform.hpp"
#include "encoders/tokenizers/eagle_prompt.hpp"
#include "error_of.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "packed_writer.hpp"
#include "python_reference.hpp"
#include "eagle_fixtures.hpp"

using namespace emb;
using nlohmann::json;
namespace fs = std::filesystem;

using namespace emb::test;

BOOST_AUTO_TEST_CASE(features_of_every_step_with_provenance) {
  const std::string dir = emb::test::make_temp_dir("features_run");
  const PackedData p = dataset(48, 64);
  write_packed(p, dir + "/in.h5", "test");
  ToolResult r = run_tool(features_command(dir + "/in.h5", dir + "/out.h5", "--batch 3"), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  BOOST_TEST(r.out.find("vl features of 12 steps") != std::string::npos, r.out);

  // The same computation in-process: views in the file's order (front, wrist), eval frames.
  CpuOps cpu;
  encoders::EagleBackbone backbone(cpu, tiny().checkpoint, tiny().eagle, DType::f32);
  const encoders::EagleDims& d = backbone.dims();
  const tokenizers::Qwen2Tokenizer tokenizer(tiny().eagle);
  std::vector<int64_t> offsets;
  const std::vector<float> got = stored_vl(dir + "/out.h5", offsets);
  BOOST_TEST_REQUIRE(offsets.size() == size_t(p.steps() + 1));
  const int64_t H = 48, W = 64, frame = H * W * 3;
  double worst = 0;
  for (int64_t s = 0, e = 0; s < p.steps(); ++s) {
    while (p.episode_offsets[size_t(e) + 1] <= s) ++e;
    std::vector<uint8_t> frames(size_t(2 * frame));
    for (int v = 0; v < 2; ++v)
      std::copy_n(p.videos[size_t(v)].frames.data() + s * frame, frame, frames.data() + v * frame);
    const std::vector<uint8_t> u8 = encoders::gr00t_frames(frames.data(), 2, H, W, d.image_size, nullptr, "test");
    std::vector<float> rows(size_t(2 * d.tokens_per_image() * d.patch_features()));
    encoders::eagle_patch_rows(u8.data(), 2, d.image_size, d.patch, rows.data());
    const tokenizers::EaglePrompt prompt =
        tokenizers::gr00t_prompt(tokenizer, 2, kTasks[size_t(p.episode_task[size_t(e)])], d.tokens_per_image());
    const std::vector<float> want = backbone.features({{prompt.ids, 2}}, rows.data());
    BOOST_TEST_REQUIRE(offsets[size_t(s) + 1] - offsets[size_t(s)] == int64_t(prompt.ids.size()));
    for (size_t i = 0; i < want.size(); ++i) {
      const float stored = got[size_t(offsets[size_t(s)] * d.llm_hidden) + i];
      worst = std::max(worst, double(std::fabs(stored - want[i])) / std::max(1.0, double(std::fabs(want[i]))));
    }
  }
  BOOST_TEST(worst <= 1e-3, "fp16 rows against the in-process backbone: " << worst);

  const H5File f = H5File::open(dir + "/out.h5");
  BOOST_TEST(f.attr_string(packed::kVlFeatures, "backbone") == "gr00t-n1.5 eagle2.5");
  BOOST_TEST(f.attr_string(packed::kVlFeatures, packed::kBackboneDigest) ==
             encoders::eagle_weights_digest(WeightSource(tiny().checkpoint)));
  BOOST_TEST(f.attr_string(packed::kVlFeatures, "checkpoint") == tiny().checkpoint);
  BOOST_TEST(f.attr_string(packed::kVlFeatures, "views") == "front,wrist");
  BOOST_TEST(f.attr_string(packed::kVlFeatures, "recipe").rfind("embtrain ", 0) == 0);
  BOOST_TEST(f.attr_string(packed::kVlFeatures, "dims") == encoders::describe(d));
  BOOST_TEST(f.attr_string(packed::kVlFeatures, "augment") == "0");
  // Everything else is carried over: steps, episodes, tasks, frames.
  BOOST_TEST(f.read_all<int64_t>(packed::kEpisodeOffsets) == p.episode_offsets);
  BOOST_TEST(f.read_all<float>(packed::kState) == p.state);
  BOOST_TEST(f.read_all<uint8_t>(str(packed::kVideo, "/wrist")) == p.videos[1].frames);
  BOOST_TEST(f.read_strings(packed::kTaskText) == kTasks);

  // --views sets the prompt order; a digest changes with any weight.
  r = run_tool(features_command(dir + "/in.h5", dir + "/swapped.h5", "--views wrist,front"), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  BOOST_TEST(H5File::open(dir + "/swapped.h5").attr_string(packed::kVlFeatures, "views") == "wrist,front");
  std::vector<int64_t> swapped_offsets;
  BOOST_TEST(stored_vl(dir + "/swapped.h5", swapped_offsets) != got);

  // Two and three ranks write the same features.
  for (int np : {2, 3}) {
    const std::string out = str(dir, "/np", np, ".h5");
    r = run_tool(str("mpirun -np ", np, " --oversubscribe ", features_command(dir + "/in.h5", out, "--batch 2")), dir);
    BOOST_TEST_REQUIRE(r.code == 0, r.err);
    std::vector<int64_t> np_offsets;
    const std::vector<float> np_vl = stored_vl(out, np_offsets);
    BOOST_TEST(np_offsets == offsets);
    double diff = 0;
    for (size_t i = 0; i < got.size(); ++i) diff = std::max(diff, double(std::fabs(np_vl[i] - got[i])));
    BOOST_TEST(diff <= 2e-3, np << " ranks: " << diff);
  }
}

// --augment K stores K variants per step under GR00T's training crop and colour jitter (drawn
// from (seed, step, k)), with /features/vl's rows; training with data.vl_augment = on reads
// variant epoch mod K, and refuses a file without variants.
BOOST_AUTO_TEST_CASE(augmented_variants) {
  const std::string dir = emb::test::make_temp_dir("features_augment");
  const PackedData p = dataset(48, 64);
  write_packed(p, dir + "/in.h5", "test");
  BOOST_TEST_REQUIRE(run_tool(features_command(dir + "/in.h5", dir + "/plain.h5"), dir).code == 0);
  const ToolResult r = run_tool(features_command(dir + "/in.h5", dir + "/aug.h5", "--augment 2 --seed 5 --batch 5"), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  const H5File f = H5File::open(dir + "/aug.h5");
  BOOST_TEST(f.attr_string(packed::kVlFeatures, "augment") == "2");
  BOOST_TEST(f.attr_string(packed::kVlFeatures, "augment_seed") == "5");
  const std::vector<int64_t> offsets = f.read_all<int64_t>(packed::kVlOffsets);
  std::vector<std::vector<uint16_t>> variants;
  for (int k = 0; k < 2; ++k) {
    BOOST_TEST(f.read_all<int64_t>(str(packed::kVlAugmented, k, "_offsets")) == offsets);
    variants.push_back(f.read_all<uint16_t>(str(packed::kVlAugmented, k)));
  }
  const std::vector<uint16_t> eval = f.read_all<uint16_t>(packed::kVlFeatures);
  // The eval rows are the plain run's (another batch size: GEMM rounding, within fp16's).
  const std::vector<uint16_t> plain = H5File::open(dir + "/plain.h5").read_all<uint16_t>(packed::kVlFeatures);
  BOOST_TEST_REQUIRE(plain.size() == eval.size());
  double eval_diff = 0;
  for (size_t i = 0; i < eval.size(); ++i)
    eval_diff = std::max(eval_diff, double(std::fabs(half_to_float(eval[i]) - half_to_float(plain[i]))));
  BOOST_TEST(eval_diff <= 2e-3, eval_diff);
  BOOST_TEST(variants[0] != eval);
  BOOST_TEST(variants[1] != variants[0]);
  // Step 6 (episode 1, task 1), variant 1: the in-process backbone on that draw's frames.
  CpuOps cpu;
  encoders::EagleBackbone backbone(cpu, tiny().checkpoint, tiny().eagle, DType::f32);
  const encoders::EagleDims& d = backbone.dims();
  const int64_t s = 6, frame = 48 * 64 * 3;
  std::vector<uint8_t> frames(size_t(2 * frame));
  for (int v = 0; v < 2; ++v) std::copy_n(p.videos[size_t(v)].frames.data() + s * frame, frame, frames.data() + v * frame);
  const encoders::FrameAugmentation drawn = encoders::draw_augmentation(48, 64, 5, uint64_t(s), 1);
  const std::vector<uint8_t> u8 = encoders::gr00t_frames(frames.data(), 2, 48, 64, d.image_size, &drawn, "test");
  std::vector<float> rows(size_t(2 * d.tokens_per_image() * d.patch_features()));
  encoders::eagle_patch_rows(u8.data(), 2, d.image_size, d.patch, rows.data());
  const tokenizers::Qwen2Tokenizer tokenizer(tiny().eagle);
  const std::vector<float> want =
      backbone.features({{tokenizers::gr00t_prompt(tokenizer, 2, kTasks[1], d.tokens_per_image()).ids, 2}}, rows.data());
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const float stored = half_to_float(variants[1][size_t(offsets[size_t(s)] * d.llm_hidden) + i]);
    worst = std::max(worst, double(std::fabs(stored - want[i])) / std::max(1.0, double(std::fabs(want[i]))));
  }
  BOOST_TEST(worst <= 1e-3, "variant 1 of step 6: " << worst);

  TokenConfig cfg;
  cfg.family = Family::gr00t, cfg.d_ctx = 32, cfg.n_embodiments = 1, cfg.state_dim = 3, cfg.action_dim = 2;
  cfg.horizon = 4, cfg.n_future = 2;
  VlFeatureChoice vl_augment;
  vl_augment.augmented = true;
  const PackedDataset augmented(MPI_COMM_NULL, MpioTransfer::independent, {dir + "/aug.h5"}, cfg, "", vl_augment);
  BOOST_TEST(augmented.file(0).feature_dataset(0) == "/features/vl_aug0");
  BOOST_TEST(augmented.file(0).feature_dataset(3) == "/features/vl_aug1");
  const PackedDataset plain_reads(MPI_COMM_NULL, MpioTransfer::independent, {dir + "/aug.h5"}, cfg, "");
  BOOST_TEST(plain_reads.file(0).feature_dataset(3) == "/features/vl");
  BOOST_TEST(emb::test::error_of([&] {
               PackedDataset(MPI_COMM_NULL, MpioTransfer::independent, {dir + "/plain.h5"}, cfg, "", vl_augment);
             }) == dir + "/plain.h5:/features/vl: holds no augmented variants, but data.vl_augment = on; compute them "
                         "with embpack features --augment K, or set data.vl_augment = off");
}

// The loader takes features whose backbone digest is data.vl_backbone's, and refuses those of
// another backbone and the stand-in encoder's (no digest), in one line naming the file.
BOOST_AUTO_TEST_CASE(training_refuses_features_of_another_backbone) {
  const std::string dir = emb::test::make_temp_dir("features_check");
  write_packed(dataset(48, 64), dir + "/in.h5", "test");
  BOOST_TEST_REQUIRE(run_tool(features_command(dir + "/in.h5", dir + "/ours.h5"), dir).code == 0);
  PackedData stand_in = dataset(48, 64);
  VarlenFeatures& vl = stand_in.features["vl"];
  vl.dim = 32, vl.values.assign(size_t(vl.offsets.back() * 32), float_to_half(0.25f));
  write_packed(stand_in, dir + "/stand_in.h5", "test");
  TokenConfig cfg;
  cfg.family = Family::gr00t, cfg.d_ctx = 32, cfg.n_embodiments = 1, cfg.state_dim = 3, cfg.action_dim = 2;
  cfg.horizon = 4, cfg.n_future = 2;
  const std::string ours = encoders::eagle_weights_digest(WeightSource(tiny().checkpoint));
  auto open = [&](const std::string& file, const std::string& digest) {
    VlFeatureChoice checked;
    checked.backbone_digest = digest;
    return emb::test::error_of(
        [&] { PackedDataset(MPI_COMM_NULL, MpioTransfer::independent, {file}, cfg, "", checked); });
  };
  BOOST_TEST(open(dir + "/ours.h5", ours) == "");
  BOOST_TEST(open(dir + "/ours.h5", "") == "");
  BOOST_TEST(open(dir + "/stand_in.h5", "") == "");
  BOOST_TEST(open(dir + "/ours.h5", "0123456789abcdef") ==
             dir + "/ours.h5:/features/vl: made by the backbone " + ours + " (" + tiny().checkpoint +
                 "), not data.vl_backbone's 0123456789abcdef; recompute them with embpack features --backbone");
  BOOST_TEST(open(dir + "/stand_in.h5", ours) ==
             dir + "/stand_in.h5:/features/vl: made without a backbone digest (the stand-in encoder of the simulated "
                   "tasks), but data.vl_backbone asks for the backbone " + ours +
                   "; compute them with embpack features --backbone");
}

BOOST_AUTO_TEST_CASE(bad_input_is_one_line_exit_2_and_no_file) {
  const std::string dir = emb::test::make_temp_dir("features_bad");
  write_packed(dataset(48, 64), dir + "/in.h5", "test");
  auto expect_refused = [&](const std::string& command, const std::string& message) {
    const ToolResult r = run_tool(command, dir);
    BOOST_TEST(r.code == 2, command << ": exit " << r.code << ": " << r.err);
    BOOST_TEST(r.err == "embpack: " + message + "\n", r.err);
    BOOST_TEST(!fs::exists(dir + "/out.h5"));
    BOOST_TEST(!fs::exists(dir + "/out.h5.tmp"));
  };
  // A tokenizer folder without merges.txt.
  const std::string no_merges = dir + "/no_merges";
  fs::create_directories(no_merges);
  for (const auto& entry : fs::directory_iterator(tiny().eagle))
    if (entry.path().filename() != "merges.txt") fs::copy(entry.path(), no_merges + "/" + entry.path().filename().string());
  {
    const ToolResult r = run_tool(features_command(dir + "/in.h5", dir + "/out.h5", "--eagle " + no_merges), dir);
    BOOST_TEST(r.code == 2, r.err);
    BOOST_TEST(r.err.find(no_merges) != std::string::npos, r.err);
    BOOST_TEST(r.err.find("merges.txt") != std::string::npos, r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
    BOOST_TEST(!fs::exists(dir + "/out.h5"));
  }
  // A tokenizer without <IMG_CONTEXT>.
  const std::string no_image_token = dir + "/no_image_token";
  fs::create_directories(no_image_token);
  for (const auto& entry : fs::directory_iterator(tiny().eagle))
    fs::copy(entry.path(), no_image_token + "/" + entry.path().filename().string());
  remove_image_token(no_image_token);
  {
    const ToolResult r = run_tool(features_command(dir + "/in.h5", dir + "/out.h5", "--eagle " + no_image_token), dir);
    BOOST_TEST(r.code == 2, r.err);
    BOOST_TEST(r.err.find("<IMG_CONTEXT>") != std::string::npos, r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
    BOOST_TEST(!fs::exists(dir + "/out.h5"));
  }
  // Frames of two resolutions, and of four channels.
  {
    PackedData mixed = dataset(48, 64);
    mixed.videos[1].height = 32, mixed.videos[1].width = 32;
    mixed.videos[1].frames.resize(size_t(mixed.steps() * 32 * 32 * 3));
    write_packed(mixed, dir + "/mixed.h5", "test");
    expect_refused(features_command(dir + "/mixed.h5", dir + "/out.h5"),
                   dir + "/mixed.h5:/video/wrist: frames 32x32 differ from /video/front's 48x64 (a step's views "
                         "are stacked or tiled: they must share one resolution)");
  }
  {
    fs::copy_file(dir + "/in.h5", dir + "/rgba.h5", fs::copy_options::overwrite_existing);
    H5File f = H5File::append(dir + "/rgba.h5");
    const std::vector<uint8_t> four(size_t(12 * 4 * 4 * 4), 7);
    f.write<uint8_t>(str(packed::kVideo, "/zz_rgba"), {12, 4, 4, 4}, four.data());
  }
  expect_refused(features_command(dir + "/rgba.h5", dir + "/out.h5"),
                 dir + "/rgba.h5:/video/zz_rgba: expected 3 channels (RGB), found 4");
  // A head whose backbone_embedding_dim is not the backbone's width.
  const std::string wide = dir + "/wide_head";
  fs::create_directories(wide);
  fs::copy(tiny().checkpoint, wide, fs::copy_options::recursive);
  json config = json::parse(emb::test::read_file(wide + "/config.json"));
  config["action_head_cfg"] = {{"backbone_embedding_dim", 2048}};
  emb::test::write_file(wide + "/config.json", config.dump());
  expect_refused(str(EMBPACK_EXE, " features --backbone ", wide, " ", dir, "/in.h5 -o ", dir, "/out.h5"),
                 wide + "/config.json: action_head_cfg.backbone_embedding_dim 2048 disagrees with the backbone's "
                        "width 32 (" + wide + "/eagle2_hg_model/config.json text_config.hidden_size)");
  // A checkpoint without one of the backbone's tensors.
  const std::string missing = dir + "/missing";
  fs::create_directories(missing);
  fs::copy(tiny().checkpoint, missing, fs::copy_options::recursive);
  BOOST_REQUIRE(std::system(("/usr/bin/python3 -c \"import sys; sys.path.insert(0, '" + kSource +
                             "/tests/encoders_ref'); from safetensors_io import load_file, save_file; p = '" + missing +
                             "/model.safetensors'; t, m = load_file(p); "
                             "t.pop('backbone.eagle_model.language_model.model.norm.weight'); save_file(t, p)\"")
                                .c_str()) == 0);
  expect_refused(str(EMBPACK_EXE, " features --backbone ", missing, " ", dir, "/in.h5 -o ", dir, "/out.h5"),
                 missing + ": backbone tensor backbone.eagle_model.language_model.model.norm.weight is missing "
                           "(GR00T-N1.5's Eagle backbone reads it; shape [32])");
}
