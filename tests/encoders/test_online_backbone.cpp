// model.backbone = online (issue 33): the step computes the vl features with the frozen Eagle
// backbone from the frames and task prompts the loader packs. On the fixtures' file (two views,
// three episodes of two tasks) and the tiny upstream-format backbone with the real tokenizer:
//  - at evaluation (no augmentation) every sample's online rows equal the backbone run in
//    process on that step's eval frames and prompt, as `embpack features` computes them, within
//    1e-6 relative, and the rows `embpack features` stored within the fp16 they are stored in;
//  - in training each sample gets GR00T's crop and jitter drawn from (seed, sample id, step): the
//    same draw gives the same rows (resume is exact), another step other rows;
//  - three training steps on online features (augmentation off) give the loss of the run on the
//    offline features within the fp16 rounding of the stored features, with a backbone phase;
//  - on CUDA (under the emulation in CI) the step's rows equal the CPU's within 1e-4, and a
//    CUDA run on online features the loss of the CUDA run on offline features;
//  - under the emulation only the cases that run a CUDA path: the CPU cases are the same code
//    there as in the CPU build, which covers them (they would cost the emulated suite ~2 min).
//  - bad input (a missing tokenizer file, a tokenizer without <IMG_CONTEXT>, views of two
//    resolutions or four channels, a backbone narrower than model.d_ctx) is one line, exit 2,
//    and nothing written.
#define BOOST_TEST_MODULE test_online_backbone
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/loader.hpp"
#include "eagle_fixtures.hpp"
#include "encoders/eagle/frame_transform.hpp"
#include "encoders/tokenizers/eagle_prompt.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "rl/mpi_fixture.hpp"
#include "train/online_backbone.hpp"
#ifdef EMBTRAIN_CUDA_KERNELS
#include "kernels/cuda/cuda_ops.hpp"
#include "kernels/cuda_device.hpp"
#endif
#ifdef EMBTRAIN_CUDA_EMULATED
#include "kernels/cuda/emu/runtime.hpp"
#endif

using namespace emb;
using namespace emb::test;
using nlohmann::json;

namespace {

BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

constexpr int64_t kH = 48, kW = 64, kFrame = kH * kW * 3;

ModelConfig tiny_head() {
  ModelConfig mc = preset_config("tiny_gr00t");
  mc.state_dim = 3, mc.action_dim = 2;
  mc.online_backbone = true, mc.backbone_dir = tiny().checkpoint;
  return mc;
}

// The loader's settings for `file` with model.backbone = online (4096 tokens a micro-batch).
DataConfig online_data(const std::string& file, const ModelConfig& mc, int64_t global_batch) {
  DataConfig dc;
  dc.paths = {file}, dc.global_batch = global_batch, dc.tokens_per_mb = 4096, dc.prefetch = 0;
  dc.normalize = false;  // raw states: row_of finds a sample's step by its state row
  dc.online_prompt = online_prompt(mc);
  return dc;
}

// The step row of a batch's sample: its state row is unique in the fixture's random states.
int64_t row_of(const PackedData& p, const PackedBatch& b, int32_t slot, int state_dim) {
  for (int64_t s = 0; s < p.steps(); ++s)
    if (std::equal(p.state.begin() + s * 3, p.state.begin() + s * 3 + 3, b.state.begin() + slot * state_dim)) return s;
  BOOST_FAIL("batch sample " << slot << " matches no step");
  return -1;
}

// The backbone in process on step s's frames (eval, or under `augmentation`) and prompt.
std::vector<float> reference_rows(encoders::EagleBackbone& backbone, const PackedData& p, int64_t s,
                                  const encoders::FrameAugmentation* augmentation) {
  const encoders::EagleDims& d = backbone.dims();
  std::vector<uint8_t> frames(size_t(2 * kFrame));
  for (int v = 0; v < 2; ++v) std::copy_n(p.videos[size_t(v)].frames.data() + s * kFrame, kFrame, frames.data() + v * kFrame);
  const std::vector<uint8_t> u8 = encoders::gr00t_frames(frames.data(), 2, kH, kW, d.image_size, augmentation, "test");
  std::vector<float> rows(size_t(2 * d.tokens_per_image() * d.patch_features()));
  encoders::eagle_patch_rows(u8.data(), 2, d.image_size, d.patch, rows.data());
  int64_t e = 0;
  while (p.episode_offsets[size_t(e) + 1] <= s) ++e;
  const tokenizers::Qwen2Tokenizer tokenizer(tiny().eagle);
  const std::string& task = kTasks[size_t(p.episode_task[size_t(e)])];
  return backbone.features({{tokenizers::gr00t_prompt(tokenizer, 2, task, d.tokens_per_image()).ids, 2}}, rows.data());
}

double relative_difference(const float* got, const float* want, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i)
    worst = std::max(worst, double(std::fabs(got[i] - want[i])) / std::max(1.0, double(std::fabs(want[i]))));
  return worst;
}

// The context [n_context, E] the step's backbone left in the backend's memory, on the host.
std::vector<float> host_context(Ops& ops, const PackedBatch& b, int64_t E) {
  BOOST_TEST_REQUIRE(b.context.empty());
  BOOST_TEST_REQUIRE(b.backend_context != nullptr);
  std::vector<float> out(size_t(b.n_context * E));
  ops.download(out.data(), b.backend_context, out.size() * sizeof(float));
  return out;
}

// The context rows of slot `slot` (its cseq rows, in order).
std::vector<float> slot_rows(const std::vector<float>& context, const PackedBatch& b, int32_t slot, int64_t E) {
  std::vector<float> out;
  for (int64_t t = 0; t < b.n_context; ++t)
    if (b.cseq[size_t(t)] == slot) out.insert(out.end(), context.begin() + t * E, context.begin() + (t + 1) * E);
  return out;
}


}  // namespace

BOOST_AUTO_TEST_CASE(online_features_equal_the_offline_computation, *cpu_case) {
  const std::string dir = make_temp_dir("online");
  const PackedData p = dataset(kH, kW);
  write_packed(p, dir + "/in.h5", "test");
  ToolResult r = run_tool(features_command(dir + "/in.h5", dir + "/offline.h5"), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  std::vector<int64_t> offsets;
  const std::vector<float> offline = stored_vl(dir + "/offline.h5", offsets);

  const ModelConfig mc = tiny_head();
  const DataConfig dc = online_data(dir + "/in.h5", mc, 4);
  Loader loader(MPI_COMM_WORLD, dc, mc);
  CpuOps cpu;
  OnlineBackbone online(cpu, mc, DType::f32, 1234);
  encoders::EagleBackbone backbone(cpu, tiny().checkpoint, tiny().eagle, DType::f32);
  const int64_t E = backbone.dims().llm_hidden;
  int checked = 0;
  double worst = 0, worst_stored = 0;
  for (int step = 1; step <= 3; ++step) {
    for (PackedBatch& b : loader.next_step()) {
      if (b.n_samples == 0) continue;
      BOOST_TEST(b.context.empty());  // the loader leaves the context to the step
      online.compute_context(b, 0, step, false);
      const std::vector<float> context = host_context(cpu, b, E);
      for (int32_t slot = 0; slot < b.n_samples; ++slot) {
        const int64_t s = row_of(p, b, slot, mc.state_dim);
        const std::vector<float> got = slot_rows(context, b, slot, E), want = reference_rows(backbone, p, s, nullptr);
        BOOST_TEST_REQUIRE(got.size() == want.size());
        BOOST_TEST_REQUIRE(int64_t(got.size()) == (offsets[size_t(s) + 1] - offsets[size_t(s)]) * E);
        worst = std::max(worst, relative_difference(got.data(), want.data(), got.size()));
        worst_stored = std::max(worst_stored, relative_difference(offline.data() + offsets[size_t(s)] * E, got.data(), got.size()));
        ++checked;
      }
    }
  }
  BOOST_TEST(checked == 12);
  BOOST_TEST(worst <= 1e-6, "online against the in-process backbone: " << worst);
  BOOST_TEST(worst_stored <= 1e-3, "embpack features' fp16 rows against online: " << worst_stored);
}

BOOST_AUTO_TEST_CASE(training_transforms_are_drawn_per_sample_and_step, *cpu_case) {
  const std::string dir = make_temp_dir("online_augment");
  const PackedData p = dataset(kH, kW);
  write_packed(p, dir + "/in.h5", "test");
  const ModelConfig mc = tiny_head();
  const DataConfig dc = online_data(dir + "/in.h5", mc, 2);
  Loader loader(MPI_COMM_WORLD, dc, mc);
  std::vector<PackedBatch> batches = loader.next_step();
  BOOST_TEST_REQUIRE(batches[0].n_samples > 0);
  CpuOps cpu;
  OnlineBackbone online(cpu, mc, DType::f32, 77);
  encoders::EagleBackbone backbone(cpu, tiny().checkpoint, tiny().eagle, DType::f32);
  const int64_t E = backbone.dims().llm_hidden;
  PackedBatch at5 = batches[0], again = batches[0], at6 = batches[0], eval = batches[0];
  online.compute_context(at5, 0, 5, true), online.compute_context(again, 1, 5, true);
  online.compute_context(at6, 2, 6, true), online.compute_context(eval, 3, 5, false);
  const std::vector<float> context5 = host_context(cpu, at5, E);
  BOOST_TEST(context5 == host_context(cpu, again, E));
  BOOST_TEST(context5 != host_context(cpu, at6, E));
  BOOST_TEST(context5 != host_context(cpu, eval, E));
  const int64_t s = row_of(p, at5, 0, mc.state_dim);
  const encoders::FrameAugmentation drawn = encoders::draw_augmentation(kH, kW, 77, uint64_t(at5.sample_id[0]), 5);
  const std::vector<float> want = reference_rows(backbone, p, s, &drawn), got = slot_rows(context5, at5, 0, E);
  BOOST_TEST_REQUIRE(got.size() == want.size());
  BOOST_TEST(relative_difference(got.data(), want.data(), got.size()) <= 1e-6);
}

// The model reads the backbone's rows where they were written (PackedBatch::backend_context):
// its loss and gradients are bit-identical to those of the same rows staged from the host, the
// path before the features stayed in the backend's memory.
BOOST_AUTO_TEST_CASE(backend_context_gives_the_host_context_loss_bit_for_bit, *cpu_case) {
  const std::string dir = make_temp_dir("online_parity");
  write_packed(dataset(kH, kW), dir + "/in.h5", "test");
  const ModelConfig mc = tiny_head();
  const DataConfig dc = online_data(dir + "/in.h5", mc, 4);
  Loader loader(MPI_COMM_WORLD, dc, mc);
  CpuOps cpu;
  OnlineBackbone online(cpu, mc, DType::f32, 5);
  const std::unique_ptr<Model> model = make_model(mc, &cpu);
  std::vector<float> params(size_t(model->params().total()));
  model->init_params(params.data(), 3);
  int compared = 0;
  for (int step = 1; step <= 3; ++step) {
    for (PackedBatch& on_backend : loader.next_step()) {
      if (on_backend.n_samples == 0) continue;
      online.compute_context(on_backend, 0, step, true);
      PackedBatch on_host = on_backend;
      on_host.context = host_context(cpu, on_backend, mc.d_ctx);
      on_host.backend_context = nullptr;
      const std::vector<double> denominators = model->loss_counts(on_backend);
      std::vector<float> grads_backend(params.size(), 0.f), grads_host(params.size(), 0.f);
      const double loss_backend =
          model->forward_backward(params.data(), grads_backend.data(), on_backend, step, 11, denominators);
      const double loss_host =
          model->forward_backward(params.data(), grads_host.data(), on_host, step, 11, denominators);
      BOOST_TEST(loss_backend == loss_host, "step " << step);
      BOOST_TEST(grads_backend == grads_host, "step " << step);
      ++compared;
    }
  }
  BOOST_TEST(compared >= 3);
}

#ifdef EMBTRAIN_CUDA_KERNELS
BOOST_AUTO_TEST_CASE(online_features_on_cuda_equal_the_cpu) {
  if (!emb::testing::cuda_device_or_skip()) return;
  const std::string dir = make_temp_dir("online_cuda");
  write_packed(dataset(kH, kW), dir + "/in.h5", "test");
  const ModelConfig mc = tiny_head();
  const DataConfig dc = online_data(dir + "/in.h5", mc, 3);
  Loader loader(MPI_COMM_WORLD, dc, mc);
  const std::vector<PackedBatch> batches = loader.next_step();
  BOOST_TEST_REQUIRE(batches[0].n_samples > 0);
  CpuOps cpu;
  CudaOps cuda;
  OnlineBackbone on_cpu(cpu, mc, DType::f32, 9), on_cuda(cuda, mc, DType::f32, 9), on_bf16(cuda, mc, DType::bf16, 9);
  const int64_t E = on_cpu.dims().llm_hidden;
  for (const bool augment : {false, true}) {
    PackedBatch a = batches[0], b = batches[0], c = batches[0];
    on_cpu.compute_context(a, 0, 2, augment);
#ifdef EMBTRAIN_CUDA_EMULATED
    // The features stay on the device: computing them copies nothing back to the host (the
    // emulation records every device-to-host copy; the host path had one per micro-batch).
    std::vector<uint64_t> device_to_host;
    emu::record_copies(&device_to_host);
#endif
    on_cuda.compute_context(b, 0, 2, augment), on_bf16.compute_context(c, 0, 2, augment);
#ifdef EMBTRAIN_CUDA_EMULATED
    cuda.synchronize();
    emu::record_copies(nullptr);
    BOOST_TEST(device_to_host.size() == 0u);
#endif
    const std::vector<float> want = host_context(cpu, a, E), got = host_context(cuda, b, E);
    BOOST_TEST(relative_difference(got.data(), want.data(), want.size()) <= 1e-4, "augment " << augment);
    // bf16 storage: the rows are widened to the fp32 context on the device (within
    // test_eagle_backbone's bf16 bound: max error over the largest feature).
    const std::vector<float> got_bf16 = host_context(cuda, c, E);
    double error = 0, scale = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      error = std::max(error, double(std::fabs(got_bf16[i] - want[i])));
      scale = std::max(scale, double(std::fabs(want[i])));
    }
    BOOST_TEST(error <= 3e-2 * scale, "bf16, augment " << augment << ": error " << error << " of " << scale);
  }
}
#endif

BOOST_AUTO_TEST_CASE(training_on_online_features_gives_the_offline_loss, *cpu_case) {
  const std::string dir = make_temp_dir("online_train");
  write_packed(dataset(kH, kW), dir + "/in.h5", "test");
  BOOST_TEST_REQUIRE(run_tool(features_command(dir + "/in.h5", dir + "/offline.h5"), dir).code == 0);
  ToolResult r = run_tool(train_command(dir, "offline", dir + "/offline.h5", ""), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.out + r.err);
  r = run_tool(train_command(dir, "online", dir + "/offline.h5", online_flags(false)), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.out + r.err);
  const std::vector<double> offline = losses(dir + "/offline"), online = losses(dir + "/online");
  BOOST_TEST_REQUIRE(offline.size() == 3u);
  BOOST_TEST_REQUIRE(online.size() == 3u);
  for (size_t i = 0; i < 3; ++i)
    BOOST_TEST(std::fabs(online[i] - offline[i]) <= 1e-3 * std::fabs(offline[i]),
               "step " << i + 1 << ": online " << online[i] << ", offline " << offline[i]);
  const json summary = json::parse(read_file(dir + "/online/summary.json"));
  BOOST_TEST(summary["phases"]["backbone"]["per_step"]["mean"].get<double>() > 0);
  const json offline_summary = json::parse(read_file(dir + "/offline/summary.json"));
  BOOST_TEST(offline_summary["phases"]["backbone"]["per_step"]["mean"].get<double>() == 0);
  // With augmentation (the default) the loss moves, and a rerun repeats it exactly.
  r = run_tool(train_command(dir, "augmented", dir + "/in.h5", online_flags(true)), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.out + r.err);
  r = run_tool(train_command(dir, "augmented2", dir + "/in.h5", online_flags(true)), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.out + r.err);
  BOOST_TEST(losses(dir + "/augmented") == losses(dir + "/augmented2"));
  BOOST_TEST(losses(dir + "/augmented") != online);
}

#ifdef EMBTRAIN_CUDA_KERNELS
BOOST_AUTO_TEST_CASE(training_on_cuda_online_features_gives_the_cuda_offline_loss) {
  if (!emb::testing::cuda_device_or_skip()) return;
  const std::string dir = make_temp_dir("online_train_cuda");
  write_packed(dataset(kH, kW), dir + "/in.h5", "test");
  BOOST_TEST_REQUIRE(run_tool(features_command(dir + "/in.h5", dir + "/offline.h5"), dir).code == 0);
  // 2 steps of 2 samples: step 2 runs on the head step 1 updated; the emulation's cost is per image.
  constexpr int steps = 2;
  const std::string small = " --set train.global_batch=2 ", cuda = small + " --set run.device=cuda ";
  ToolResult r = run_tool(train_command(dir, "online", dir + "/offline.h5", small + online_flags(false), steps), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.out + r.err);
  r = run_tool(train_command(dir, "offline_cuda", dir + "/offline.h5", cuda, steps), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.out + r.err);
  r = run_tool(train_command(dir, "online_cuda", dir + "/offline.h5", cuda + online_flags(false), steps), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.out + r.err);
  const std::vector<double> online = losses(dir + "/online"), offline_cuda = losses(dir + "/offline_cuda"),
                            online_cuda = losses(dir + "/online_cuda");
  BOOST_TEST_REQUIRE(online.size() == size_t(steps));
  BOOST_TEST_REQUIRE(offline_cuda.size() == size_t(steps));
  BOOST_TEST_REQUIRE(online_cuda.size() == size_t(steps));
  for (size_t i = 0; i < size_t(steps); ++i) {
    BOOST_TEST(std::fabs(online_cuda[i] - offline_cuda[i]) <= 1e-3 * std::fabs(offline_cuda[i]));
    BOOST_TEST(std::fabs(online_cuda[i] - online[i]) <= 1e-4 * std::fabs(online[i]),
               "cuda against cpu, step " << i + 1);
  }
}
#endif

BOOST_AUTO_TEST_CASE(bad_input_is_one_line_exit_2_and_nothing_written, *cpu_case) {
  const std::string dir = make_temp_dir("online_bad");
  write_packed(dataset(kH, kW), dir + "/in.h5", "test");
  int case_number = 0;
  auto expect_refused = [&](const std::string& data, const std::string& backbone, const std::string& extra,
                            const std::string& message) {
    const std::string name = str("bad", ++case_number);
    const ToolResult r = run_tool(
        train_command(dir, name, data, "--set model.backbone=online --set model.backbone_dir=" + backbone + " " + extra),
        dir);
    BOOST_TEST(r.code == 2, name << ": exit " << r.code << ": " << r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
    BOOST_TEST(r.err.find(message) != std::string::npos, name << ": " << r.err);
    BOOST_TEST(!fs::exists(dir + "/" + name));
    BOOST_TEST(!fs::exists(dir + "/ckpt_" + name));
  };
  auto copy_checkpoint = [&](const std::string& name) {
    const std::string to = dir + "/" + name;
    fs::create_directories(to);
    fs::copy(tiny().checkpoint, to, fs::copy_options::recursive);
    return to;
  };
  // A tokenizer folder without merges.txt.
  const std::string no_merges = copy_checkpoint("no_merges");
  fs::remove(no_merges + "/eagle2_hg_model/merges.txt");
  expect_refused(dir + "/in.h5", no_merges, "", no_merges + "/eagle2_hg_model");
  // A tokenizer without <IMG_CONTEXT>.
  const std::string no_image_token = copy_checkpoint("no_image_token");
  remove_image_token(no_image_token + "/eagle2_hg_model");
  expect_refused(dir + "/in.h5", no_image_token, "", "<IMG_CONTEXT>");
  // Views of two resolutions, and of four channels.
  PackedData mixed = dataset(kH, kW);
  mixed.videos[1].height = 32, mixed.videos[1].width = 32;
  mixed.videos[1].frames.resize(size_t(mixed.steps() * 32 * 32 * 3));
  write_packed(mixed, dir + "/mixed.h5", "test");
  expect_refused(dir + "/mixed.h5", tiny().checkpoint, "",
                 dir + "/mixed.h5:/video/wrist: frames 32x32 differ from /video/front's 48x64 (model.backbone = "
                       "online stacks or tiles a sample's views: they must share one resolution)");
  fs::copy_file(dir + "/in.h5", dir + "/rgba.h5");
  {
    H5File f = H5File::append(dir + "/rgba.h5");
    const std::vector<uint8_t> four(size_t(12 * 4 * 4 * 4), 7);
    f.write<uint8_t>(str(packed::kVideo, "/zz_rgba"), {12, 4, 4, 4}, four.data());
  }
  expect_refused(dir + "/rgba.h5", tiny().checkpoint, "", dir + "/rgba.h5:/video/zz_rgba: expected 3 channels (RGB), found 4");
  // A head wider than the backbone (model.d_ctx 64, the tiny backbone's 32).
  expect_refused(dir + "/in.h5", tiny().checkpoint, "--set model.d_ctx=64",
                 tiny().eagle + "/config.json: text_config.hidden_size 32 (the backbone's width) disagrees with the "
                                "head's backbone_embedding_dim model.d_ctx = 64");
}
