// train.tune_visual = on (issue 33): the step trains the Eagle backbone's SigLIP vision tower and
// mlp1 with the head, the gradient reaching them through the frozen Qwen3 layers. On the
// fixtures' file and the tiny upstream-format backbone (augmentation off), 10 steps of 4 samples:
//  - step 1 gives the loss of the frozen online run (the same parameters, the trained path's ops);
//    later steps differ from it: the vision tower and mlp1 were updated;
//  - 1 and 2 ranks (ZeRO-3 over the vision tensors too) give the same losses within 1e-5;
//  - a run resumed from the step-5 checkpoint gives the uninterrupted run's losses: bit for bit on
//    1 rank, within 1e-5 on 2 ranks (the checkpoint resharded);
//  - on run.device = cuda (under the emulation in CI: label cuda) 2 steps of 2 samples give the
//    CPU run's losses and its updated vision tower and mlp1 within 1e-4 relative (step 2 on the
//    vision tower step 1 updated; the emulation's cost is per image); under the emulation only
//    that case runs (the CPU cases are the same code as in the CPU build, which covers them);
//  - the vision tower is ZeRO-3 units of its own, one per SigLIP layer (+ embeddings, + post-LN
//    and mlp1), before the head's, whose units stay as they are without tune_visual;
//  - --dump of a tune_visual step holds the vision tower's and mlp1's gradients under upstream's
//    names, and tests/upstream/gr00t_dump_parity.py recomputes the step from the dump (the Eagle
//    reference on the dumped frames and prompts): loss and every gradient within 1e-5, and so
//    does the frozen online backbone's dump (its vl rows against the reference);
//  - --plan's memory verdict counts the tuned vision tower's and the LLM's kept activations;
//  - tune_visual without model.backbone = online is refused in one line, exit 2 (with
//    run.cuda_graphs = on too: test_model_config).
#define BOOST_TEST_MODULE test_tune_visual
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_dir.hpp"
#include "data/h5_file.hpp"
#include "eagle_fixtures.hpp"
#include "encoders/eagle/eagle_dims.hpp"
#include "encoders/eagle/vision_tower_training.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "plan/backbone_cost.hpp"
#include "train/tuned_backbone.hpp"
#ifdef EMBTRAIN_CUDA_KERNELS
#include "kernels/cuda_device.hpp"
#endif

using namespace emb;
using namespace emb::test;

namespace {

constexpr int64_t kH = 48, kW = 64;
constexpr int kSteps = 10;

double relative(double a, double b) { return std::fabs(a - b) / std::max(1e-12, std::fabs(b)); }

std::string tuned_flags() { return online_flags(false) + " --set train.tune_visual=on"; }

}  // namespace

BOOST_AUTO_TEST_CASE(tune_visual_trains_the_vision_tower_on_any_rank_count_and_resumes_exactly, *cpu_case) {
  const std::string dir = make_temp_dir("tune_visual");
  const std::string data = dir + "/in.h5";
  write_packed(dataset(kH, kW), data, "test");
  const std::string every5 = " --set train.ckpt_every=5";
  auto train = [&](const std::string& name, const std::string& extra, int ranks, int steps) {
    const std::string mpi = ranks > 1 ? str("mpirun -np ", ranks, " --oversubscribe ") : "";
    const ToolResult r = run_tool(mpi + train_command(dir, name, data, extra, steps), dir);
    BOOST_TEST_REQUIRE(r.code == 0, name << ": " << r.out << r.err);
    return losses(dir + "/" + name);
  };
  const std::vector<double> frozen = train("frozen", online_flags(false), 1, kSteps);
  const std::vector<double> one = train("one", tuned_flags() + every5, 1, kSteps);
  const std::vector<double> two = train("two", tuned_flags(), 2, kSteps);
  BOOST_TEST_REQUIRE(frozen.size() == size_t(kSteps));
  BOOST_TEST_REQUIRE(one.size() == size_t(kSteps));
  BOOST_TEST_REQUIRE(two.size() == size_t(kSteps));
  BOOST_TEST(relative(one[0], frozen[0]) <= 1e-5, "step 1: tuned " << one[0] << ", frozen " << frozen[0]);
  double moved = 0;
  for (int s = 1; s < kSteps; ++s) moved = std::max(moved, relative(one[size_t(s)], frozen[size_t(s)]));
  BOOST_TEST(moved >= 1e-4, "the tuned run's losses stay within " << moved << " of the frozen run's");
  for (int s = 0; s < kSteps; ++s)
    BOOST_TEST(relative(two[size_t(s)], one[size_t(s)]) <= 1e-5,
               "step " << s + 1 << ": 2 ranks " << two[size_t(s)] << ", 1 rank " << one[size_t(s)]);
  const std::string from5 = str(" --set train.resume=", dir, "/ckpt_one/step_00000005.h5");
  const std::vector<double> resumed = train("resumed", tuned_flags() + from5, 1, kSteps);
  const std::vector<double> resharded = train("resharded", tuned_flags() + from5, 2, kSteps);
  BOOST_TEST_REQUIRE(resumed.size() == size_t(kSteps - 5));
  BOOST_TEST_REQUIRE(resharded.size() == size_t(kSteps - 5));
  for (int s = 5; s < kSteps; ++s) {
    BOOST_TEST(resumed[size_t(s - 5)] == one[size_t(s)], "step " << s + 1);
    BOOST_TEST(relative(resharded[size_t(s - 5)], one[size_t(s)]) <= 1e-5, "step " << s + 1);
  }
}

BOOST_AUTO_TEST_CASE(the_vision_tower_is_a_zero_unit_per_siglip_layer, *cpu_case) {
  ModelConfig mc = preset_config("tiny_gr00t");
  mc.online_backbone = true, mc.backbone_dir = tiny().checkpoint, mc.tune_visual = true;
  const std::unique_ptr<Model> head = make_model(mc, nullptr), tuned = make_model(with_tuned_backbone(mc), nullptr);
  const ParamRegistry &a = head->params(), &b = tuned->params();
  const encoders::EagleDims dims = encoders::read_eagle_dims(tiny().eagle, tiny().checkpoint);
  const int pieces = dims.vision_layers + 2;
  BOOST_TEST_REQUIRE(b.n_units() == a.n_units() + pieces);
  std::vector<int64_t> piece_elements(size_t(pieces), 0);
  for (const encoders::VisionTensorSlot& s : encoders::vision_tower_layout(dims))
    piece_elements[size_t(s.piece)] += s.rows * s.cols;
  for (int u = 0; u < pieces; ++u) {
    const std::string name = u == 0 ? "vision.embeddings"
                             : u <= dims.vision_layers ? str("vision.layers.", u - 1)
                                                       : std::string("vision.head");
    BOOST_TEST(b.unit(u).name == name);
    BOOST_TEST(b.unit(u).count == piece_elements[size_t(u)], name);
  }
  for (int u = 0; u < a.n_units(); ++u) {
    BOOST_TEST(b.unit(pieces + u).name == a.unit(u).name);
    BOOST_TEST(b.unit(pieces + u).count == a.unit(u).count, a.unit(u).name);
  }
}

BOOST_AUTO_TEST_CASE(dump_of_a_tune_visual_step_equals_the_reference, *cpu_case) {
  const std::string dir = make_temp_dir("tune_visual_dump");
  const std::string data = dir + "/in.h5", dump = dir + "/dump.h5";
  write_packed(dataset(kH, kW), data, "test");
  const ToolResult r = run_tool(train_command(dir, "dump", data, tuned_flags() + " --dump " + dump), dir);
  BOOST_TEST_REQUIRE(r.code == 0, r.out << r.err);
  const encoders::EagleDims dims = encoders::read_eagle_dims(tiny().eagle, tiny().checkpoint);
  const H5File f = H5File::open(dump);
  for (const encoders::VisionTensorSlot& slot : encoders::vision_tower_layout(dims)) {
    BOOST_TEST_REQUIRE(slot.name.rfind("backbone.eagle_model.", 0) == 0, slot.name);
    const std::vector<float> g = f.read_all<float>("/grads/" + slot.name);
    BOOST_TEST(g.size() == size_t(slot.rows * slot.cols), slot.name);
    BOOST_TEST(std::any_of(g.begin(), g.end(), [](float v) { return v != 0.0f; }), slot.name << ": no gradient");
  }
  const std::string check = "/usr/bin/python3 " + kSource + "/tests/upstream/gr00t_dump_parity.py --tol 1e-5 ";
  const ToolResult parity = run_tool(check + dump, dir);
  BOOST_TEST(parity.code == 0, parity.out << parity.err);
  BOOST_TEST(parity.out.find("trained (tune_visual)") != std::string::npos, parity.out);
  // The frozen online backbone's dump: its vl rows against the reference, the head's gradients.
  const std::string frozen = dir + "/frozen.h5";
  const ToolResult r2 = run_tool(train_command(dir, "frozen", data, online_flags(false) + " --dump " + frozen), dir);
  BOOST_TEST_REQUIRE(r2.code == 0, r2.out << r2.err);
  const ToolResult frozen_parity = run_tool(check + frozen, dir);
  BOOST_TEST(frozen_parity.code == 0, frozen_parity.out << frozen_parity.err);
  BOOST_TEST(frozen_parity.out.find("online backbone: vl within") != std::string::npos, frozen_parity.out);
}

BOOST_AUTO_TEST_CASE(tune_visual_needs_online_features, *cpu_case) {
  const std::string dir = make_temp_dir("tune_visual_refused");
  const ToolResult r = run_tool(train_command(dir, "refused", dir + "/none.h5", "--set train.tune_visual=on"), dir);
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find("train.tune_visual = on needs model.backbone = online") != std::string::npos, r.err);
}

// --plan's memory verdict holds the activations the trained vision tower and the frozen LLM keep:
// the deck's activations exceed the frozen online run's without its backbone (whose weights and
// forward buffers its memory_bytes_per_rank gives) by the tune_visual line's bytes per
// micro-batch (and the head's context gradient), and the total is the sum of its parts.
BOOST_AUTO_TEST_CASE(plan_counts_the_tuned_backbone_activations_in_the_verdict, *cpu_case) {
  const std::string dir = make_temp_dir("tune_visual_plan");
  const std::string data = dir + "/none.h5";  // no data: the plan costs its typical sample
  auto plan = [&](const std::string& name, const std::string& flags) {
    const std::string json_path = dir + "/" + name + ".json";
    const ToolResult r =
        run_tool(train_command(dir, name, data, flags + " --plan --set plan.json=" + json_path), dir);
    BOOST_TEST_REQUIRE(r.code == 0, name << ": " << r.out << r.err);
    return nlohmann::json::parse(read_file(json_path));
  };
  const nlohmann::json frozen = plan("frozen", online_flags(false)), tuned = plan("tuned", tuned_flags());
  const double kept = tuned["backbone"]["tune_visual"]["activation_bytes_per_micro_batch"].get<double>();
  const nlohmann::json& memory = tuned["deck"]["memory_bytes"];
  // The head of a tune_visual run also keeps the gradient of its context rows (at most
  // data.tokens_per_mb rows of d_ctx = 32 fp32).
  const nlohmann::json& frozen_memory = frozen["deck"]["memory_bytes"];
  const nlohmann::json& frozen_backbone = frozen["backbone"]["memory_bytes_per_rank"];
  BOOST_TEST(frozen_backbone["weights"].get<double>() > 0);
  BOOST_TEST(frozen_backbone["forward_per_micro_batch"].get<double>() > 0);
  const double added = memory["activations"].get<double>() - (frozen_memory["activations"].get<double>() -
                                                              frozen_backbone["forward_per_micro_batch"].get<double>());
  BOOST_TEST(kept > 0);
  BOOST_TEST(added >= kept);
  BOOST_TEST(added <= kept + 4.0 * 32 * 4096);
  // The frozen LLM's fp32 weights (tiny backbone: vocabulary and kept layers) are in the state,
  // beside the vision tower's parameters, gradients and moments.
  const double llm = tuned["backbone"]["tune_visual"]["frozen_llm_weight_bytes"].get<double>();
  BOOST_TEST(llm == tuned_frozen_weight_bytes(encoders::read_eagle_dims(tiny().eagle, tiny().checkpoint)));
  BOOST_TEST(llm > 0);
  BOOST_TEST(memory["state"].get<double>() -
                 (frozen_memory["state"].get<double>() - frozen_backbone["weights"].get<double>()) >
             llm);
  double parts = 0;
  for (const char* part : {"state", "activations", "blas_workspace", "comm_library", "reserved"})
    parts += memory[part].get<double>();
  BOOST_TEST(memory["total"].get<double>() == parts, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(memory["fits"].get<bool>() == (parts <= memory["capacity"].get<double>()));
}

#ifdef EMBTRAIN_CUDA_KERNELS
// The largest difference of a tensor's elements relative to the largest element of `want`.
double tensor_relative(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i)
    diff = std::max(diff, double(std::fabs(got[i] - want[i]))), scale = std::max(scale, double(std::fabs(want[i])));
  return diff / scale;
}

BOOST_AUTO_TEST_CASE(tune_visual_on_cuda_equals_the_cpu) {
  if (!emb::testing::cuda_device_or_skip()) return;
  const std::string dir = make_temp_dir("tune_visual_cuda");
  const std::string data = dir + "/in.h5";
  write_packed(dataset(kH, kW), data, "test");
  constexpr int steps = 2;
  const std::string flags = tuned_flags() + str(" --set train.ckpt_every=", steps, " --set train.global_batch=2");
  for (const std::string device : {"cpu", "cuda"}) {
    const ToolResult r = run_tool(train_command(dir, device, data, flags + " --set run.device=" + device, steps), dir);
    BOOST_TEST_REQUIRE(r.code == 0, device << ": " << r.out << r.err);
  }
  const std::vector<double> cpu = losses(dir + "/cpu"), cuda = losses(dir + "/cuda");
  BOOST_TEST_REQUIRE(cpu.size() == size_t(steps));
  BOOST_TEST_REQUIRE(cuda.size() == size_t(steps));
  for (int s = 0; s < steps; ++s)
    BOOST_TEST(relative(cuda[size_t(s)], cpu[size_t(s)]) <= 1e-4,
               "step " << s + 1 << ": cuda " << cuda[size_t(s)] << ", cpu " << cpu[size_t(s)]);
  // The vision tower and mlp1 after the 2 updates, against the CPU's and the initial values.
  const encoders::EagleDims dims = encoders::read_eagle_dims(tiny().eagle, tiny().checkpoint);
  const std::vector<float> initial = encoders::read_vision_tower(WeightSource(tiny().checkpoint), dims);
  const H5File on_cpu = H5File::open(dir + "/ckpt_cpu/" + checkpoint_file_name(steps));
  const H5File on_cuda = H5File::open(dir + "/ckpt_cuda/" + checkpoint_file_name(steps));
  double moved = 0;
  size_t offset = 0;
  for (const encoders::VisionTensorSlot& slot : encoders::vision_tower_layout(dims)) {
    const std::vector<float> want = on_cpu.read_all<float>("/params/" + slot.name);
    const std::vector<float> got = on_cuda.read_all<float>("/params/" + slot.name);
    BOOST_TEST_REQUIRE(want.size() == size_t(slot.rows * slot.cols), slot.name);
    BOOST_TEST_REQUIRE(got.size() == want.size(), slot.name);
    BOOST_TEST(tensor_relative(got, want) <= 1e-4, slot.name);
    const std::vector<float> start(initial.begin() + long(offset), initial.begin() + long(offset + want.size()));
    moved = std::max(moved, tensor_relative(want, start));
    offset += want.size();
  }
  BOOST_TEST(moved >= 1e-4, "the vision tower moved at most " << moved << " from its initial values");
}
#endif
