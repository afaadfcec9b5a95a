// Sharded data parallelism gives the same training as one process: for N = 1..4 ranks and
// shard = none | grads | full, three AdamW steps on synthetic packed batches reproduce the
// single-process losses and parameters, with uneven micro-batch counts per rank (ZeRO-3's
// empty passes) and ranks that get no sample at all; the shards each rank initialises itself
// are exactly those of one full initialisation. Frozen tensors in units of their own and beside
// trained ones (buckets of several pieces) train the same and keep their values. A collective's
// traced span starts when the step asked for it, however late the issuing call returns.
#define BOOST_TEST_MODULE train_data_parallel
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "comm/comm_factory.hpp"
#include "comm/world_fixture.hpp"
#include "core/run_trace.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "model/synthetic_batch.hpp"
#include "train/train_step.hpp"

namespace {
emb::CpuOps cpu_ops;  // the backend the models compute on
}  // namespace

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

namespace {

constexpr uint64_t kSeed = 7;
constexpr int kSteps = 3;

struct Run {
  std::vector<double> losses;
  std::vector<float> initial_params, params;
};

// Per tensor of reg: frozen are every third tensor and the whole of unit 1, so that some units
// are frozen whole and others mix frozen and trained tensors.
std::vector<bool> some_frozen(const ParamRegistry& reg) {
  std::vector<bool> frozen(size_t(reg.size()));
  for (int i = 0; i < reg.size(); ++i) frozen[size_t(i)] = reg[i].unit == 1 || i % 3 == 0;
  return frozen;
}

// Trains kSteps steps; each step takes `global_batch` samples, deals them round-robin over
// the ranks of `world` and packs each rank's share `per_mb` samples per micro-batch.
// freeze: some_frozen's tensors are not trained.
Run train_steps(const World& world, const ModelConfig& cfg, ShardMode mode, int global_batch, int per_mb,
                int64_t bucket_bytes = 0, bool bf16 = false, bool freeze = false) {
  auto model = make_model(cfg, &cpu_ops);
  if (freeze) model->freeze(some_frozen(model->params()));
  auto comm = make_comm(world, {CommBackend::mpi});
  ShardLayout layout(model->params(), mode, world.rank, world.size, bucket_bytes, model->frozen());
  PhaseTimers timers;
  DataParallel dp(layout, *comm, cpu_ops, timers, true, bf16);
  dp.init_owned_params(model->params(), kSeed, cfg.init_std);
  Run run;
  run.initial_params = dp.full_params();
  AdamWConfig adamw;
  adamw.lr = 1e-3f;
  adamw.weight_decay = 0.1f;
  Optimizer optimizer(layout, cpu_ops, adamw, 1.0f);
  StepContext ctx{*model, dp, optimizer, timers, *comm, kSeed, false};

  for (int step = 1; step <= kSteps; ++step) {
    std::vector<int64_t> mine;
    for (int i = world.rank; i < global_batch; i += world.size) mine.push_back(int64_t(step) * 100 + i);
    std::vector<PackedBatch> micro_batches;
    for (size_t i = 0; i < mine.size(); i += size_t(per_mb)) {
      std::vector<int64_t> ids(mine.begin() + long(i), mine.begin() + long(std::min(mine.size(), i + size_t(per_mb))));
      micro_batches.push_back(make_synthetic_batch(cfg, ids, true, kSeed));
    }
    run.losses.push_back(train_step(ctx, micro_batches, step, 1e-3).loss);
  }
  run.params = dp.full_params();
  return run;
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, double(std::fabs(a[i] - b[i])));
    scale = std::max(scale, double(std::fabs(b[i])));
  }
  return diff / scale;
}

// The elements of some_frozen's tensors that the run changed.
int64_t frozen_changed(const ModelConfig& cfg, const Run& run) {
  const std::unique_ptr<Model> model = make_model(cfg, &cpu_ops);
  const ParamRegistry& reg = model->params();
  const std::vector<bool> frozen = some_frozen(reg);
  int64_t changed = 0;
  for (int i = 0; i < reg.size(); ++i)
    for (int64_t j = reg[i].offset; frozen[size_t(i)] && j < reg[i].offset + reg[i].numel; ++j)
      changed += run.params[size_t(j)] != run.initial_params[size_t(j)];
  return changed;
}

void check_equivalence(const std::string& preset, int global_batch, int per_mb, bool freeze = false) {
  const ModelConfig cfg = preset_config(preset);
  World self;
  self.comm = MPI_COMM_SELF;
  const Run reference = train_steps(self, cfg, ShardMode::none, global_batch, global_batch, 0, false, freeze);
  // Buckets of one unit each, of a few units (64 KiB), and one bucket for the whole model
  // (the default 25 MiB on a tiny model), where successive micro-batches reduce the same bucket.
  for (int64_t bucket_bytes : {int64_t(0), int64_t(64) << 10, int64_t(25) << 20})
  for (ShardMode mode : {ShardMode::none, ShardMode::grads, ShardMode::full}) {
    BOOST_TEST_CONTEXT(preset << " shard " << int(mode) << " ranks " << test_world().size << " batch "
                              << global_batch << " per micro-batch " << per_mb << " bucket bytes " << bucket_bytes
                              << (freeze ? " frozen" : "")) {
      const Run run = train_steps(test_world(), cfg, mode, global_batch, per_mb, bucket_bytes, false, freeze);
      for (int s = 0; s < kSteps; ++s) BOOST_TEST(run.losses[size_t(s)] == reference.losses[size_t(s)],
                                                  boost::test_tools::tolerance(1e-5));
      BOOST_TEST(max_rel_diff(reference.params, reference.initial_params) > 1e-3);  // the steps did update
      BOOST_TEST(max_rel_diff(run.params, reference.params) < 1e-4);
      if (freeze) BOOST_TEST(frozen_changed(cfg, run) == 0);
    }
  }
}

// The fresh-start initialisation of every rank's shards against the full-buffer one, sharded,
// with every tensor trained and with some_frozen's frozen (buckets of several pieces).
void check_owned_init(const std::string& preset) {
  const ModelConfig cfg = preset_config(preset);
  const World& world = test_world();
  auto model = make_model(cfg, &cpu_ops);
  const ParamRegistry& reg = model->params();
  std::vector<float> flat(size_t(reg.total()));
  model->init_params(flat.data(), kSeed);
  auto comm = make_comm(world, {CommBackend::mpi});
  for (int64_t bucket_bytes : {int64_t(0), int64_t(64) << 10, int64_t(25) << 20})
  for (ShardMode mode : {ShardMode::none, ShardMode::grads, ShardMode::full})
  for (bool bf16 : {false, true})
  for (bool freeze : {false, true}) {
    BOOST_TEST_CONTEXT(preset << " shard " << int(mode) << " bf16 " << bf16 << " ranks " << world.size
                              << " bucket bytes " << bucket_bytes << (freeze ? " frozen" : "")) {
      ShardLayout layout(reg, mode, world.rank, world.size, bucket_bytes, freeze ? some_frozen(reg) : std::vector<bool>{});
      PhaseTimers timers;
      DataParallel dp(layout, *comm, cpu_ops, timers, true, bf16);
      dp.init_owned_params(reg, kSeed, cfg.init_std);
      std::vector<float> expected(size_t(layout.owned_total()));
      layout.gather_owned(flat.data(), expected.data());
      BOOST_TEST(std::memcmp(dp.owned_params(), expected.data(), expected.size() * sizeof(float)) == 0);
      // The compute copies a forward reads (gathered, replicated or rounded to bf16) are the
      // full-buffer initialisation's too; with bf16 copies every other unit asks for the bf16 copy
      // itself (as the blocks on bf16 activations do) and the others for it widened to fp32 (a
      // bucket may hand out both).
      dp.begin_micro_batch(true);
      for (int u = 0; u < reg.n_units(); ++u) {
        const UnitRange& unit = reg.unit(u);
        const DType dtype = bf16 && u % 2 == 0 ? DType::bf16 : DType::f32;
        const void* params = dp.unit_params(u, false, dtype);
        int64_t differ = 0;
        for (int64_t i = 0; i < unit.count; ++i) {
          const float want = flat[size_t(unit.offset + i)];
          const float got = dtype == DType::bf16 ? to_float(static_cast<const emb::bf16*>(params)[i])
                                                 : static_cast<const float*>(params)[i];
          differ += got != (bf16 ? to_float(to_bf16(want)) : want);
        }
        BOOST_TEST(differ == 0, "unit " << unit.name);
      }
      dp.end_micro_batch();
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(gr00t_owned_init_equals_sharded_full_init) { check_owned_init("tiny_gr00t"); }
BOOST_AUTO_TEST_CASE(wan_owned_init_equals_sharded_full_init) { check_owned_init("tiny_wan"); }

// bf16 compute copies: every shard mode and rank count trains like the single-process bf16
// run (rounding is applied to the same fp32 masters), and stays close to fp32.
void check_bf16(const std::string& preset, int global_batch, int per_mb) {
  const ModelConfig cfg = preset_config(preset);
  World self;
  self.comm = MPI_COMM_SELF;
  const Run fp32 = train_steps(self, cfg, ShardMode::none, global_batch, global_batch);
  const Run reference = train_steps(self, cfg, ShardMode::none, global_batch, global_batch, 0, true);
  for (ShardMode mode : {ShardMode::none, ShardMode::grads, ShardMode::full}) {
    BOOST_TEST_CONTEXT(preset << " bf16 shard " << int(mode) << " ranks " << test_world().size) {
      const Run run = train_steps(test_world(), cfg, mode, global_batch, per_mb, 0, true);
      for (int s = 0; s < kSteps; ++s) {
        BOOST_TEST(run.losses[size_t(s)] == reference.losses[size_t(s)], boost::test_tools::tolerance(1e-4));
        BOOST_TEST(run.losses[size_t(s)] == fp32.losses[size_t(s)], boost::test_tools::tolerance(2e-2));
      }
      BOOST_TEST(run.losses[0] != fp32.losses[0]);  // the compute copies really are rounded
      BOOST_TEST(max_rel_diff(run.params, reference.params) < 1e-3);
    }
  }
}

BOOST_AUTO_TEST_CASE(gr00t_bf16_compute) { check_bf16("tiny_gr00t", 6, 2); }
BOOST_AUTO_TEST_CASE(wan_bf16_compute) { check_bf16("tiny_wan", 4, 1); }

BOOST_AUTO_TEST_CASE(gr00t_uneven_micro_batches) { check_equivalence("tiny_gr00t", 7, 2); }
BOOST_AUTO_TEST_CASE(wan_uneven_micro_batches) { check_equivalence("tiny_wan", 5, 1); }
// Three samples on four ranks: the last rank has nothing to compute but must take part.
BOOST_AUTO_TEST_CASE(gr00t_rank_without_samples) { check_equivalence("tiny_gr00t", 3, 1); }
BOOST_AUTO_TEST_CASE(gr00t_frozen_tensors) { check_equivalence("tiny_gr00t", 7, 2, true); }

namespace {

double wall_us_now() {
  return double(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// A communicator that records each collective asked of it (when, and what) and forwards it. With
// `late`, its issuing call returns that late, as MPI's does on the rank that issues a collective
// last: its progress thread, at a higher priority on the rank's core, runs the rank's part of the
// collective before the caller has the core back.
class RecordingComm final : public Comm {
 public:
  static constexpr auto kLate = std::chrono::milliseconds(50);
  RecordingComm(std::unique_ptr<Comm> inner, std::chrono::milliseconds late)
      : Comm(inner->host_comm()), inner_(std::move(inner)), late_(late) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  const char* name() const override { return "recording"; }
  CommHandle issue(const Collective& c) override {
    asked_us.push_back(wall_us_now());
    asked.push_back(c);
    CommHandle h = inner_->issue(c);
    std::this_thread::sleep_for(late_);
    return h;
  }
  // The elements and the calls of the collectives of one kind asked since the last clear.
  std::pair<int64_t, int> asked_of(CollectiveKind kind) const {
    std::pair<int64_t, int> total{0, 0};
    for (const Collective& c : asked)
      if (c.kind == kind) total.first += c.n, ++total.second;
    return total;
  }
  std::vector<double> asked_us;
  std::vector<Collective> asked;

 private:
  std::unique_ptr<Comm> inner_;
  std::chrono::milliseconds late_;
};

}  // namespace

// The trace's collectives (and the step's comm time, the union of their spans) start when the
// step asked for them: a span timed from the call's return would start 50 ms late here. (Half
// that either way is left for the scheduler: ranks share the cores under ctest -j.)
BOOST_AUTO_TEST_CASE(collective_spans_start_when_asked_for) {
  const World& world = test_world();
  const ModelConfig cfg = preset_config("tiny_gr00t");
  auto model = make_model(cfg, &cpu_ops);
  RecordingComm comm(make_comm(world, {CommBackend::mpi}), RecordingComm::kLate);
  ShardLayout layout(model->params(), ShardMode::full, world.rank, world.size, 0);
  std::string dir = (std::filesystem::temp_directory_path() / "emb_trace_spans.XXXXXX").string();
  BOOST_REQUIRE(mkdtemp(dir.data()) != nullptr);
  {
    RunTrace trace(dir, world.rank);
    PhaseTimers timers;
    timers.set_trace(&trace);
    DataParallel dp(layout, comm, cpu_ops, timers, true, false);
    dp.init_owned_params(model->params(), kSeed, cfg.init_std);
    Optimizer optimizer(layout, cpu_ops, AdamWConfig{}, 1.0f);
    StepContext ctx{*model, dp, optimizer, timers, comm, kSeed, false};
    train_step(ctx, {make_synthetic_batch(cfg, {int64_t(world.rank)}, true, kSeed)}, 1, 1e-3);
  }
  std::ifstream in(dir + "/trace/rank" + std::to_string(world.rank) + ".json");
  const nlohmann::json events = nlohmann::json::parse(in);
  std::vector<double> spans_us;
  for (const nlohmann::json& e : events)
    if (e.at("ph") == "X" && e.at("tid") == 2) spans_us.push_back(e.at("ts").get<double>());
  std::filesystem::remove_all(dir);
  // Every collective the step issued is traced, in issue order (the gathers its update issues for
  // the next step are the next step's).
  BOOST_REQUIRE_GE(spans_us.size(), size_t(2 * layout.n_buckets()));
  BOOST_REQUIRE_LE(spans_us.size(), comm.asked_us.size());
  const double late_us = double(std::chrono::duration_cast<std::chrono::microseconds>(RecordingComm::kLate).count());
  for (size_t i = 0; i < spans_us.size(); ++i) {
    BOOST_TEST_CONTEXT("collective " << i) {
      BOOST_TEST(spans_us[i] > comm.asked_us[i] - late_us / 2);
      BOOST_TEST(spans_us[i] < comm.asked_us[i] + late_us / 2);
    }
  }
}

// ZeRO-2 gathers every piece when the parameters are loaded, and after an update only the trained
// pieces: the frozen ones' replicated copies do not change. The losses and parameters with frozen
// tensors match one process's (gr00t_frozen_tensors).
BOOST_AUTO_TEST_CASE(zero2_gathers_the_trained_pieces_after_an_update) {
  const World& world = test_world();
  const ModelConfig cfg = preset_config("tiny_gr00t");
  auto model = make_model(cfg, &cpu_ops);
  model->freeze(some_frozen(model->params()));
  RecordingComm comm(make_comm(world, {CommBackend::mpi}), std::chrono::milliseconds(0));
  const ShardLayout layout(model->params(), ShardMode::grads, world.rank, world.size, 1 << 14, model->frozen());
  int64_t trained_elements = 0;
  int trained_pieces = 0;
  for (int p = 0; p < layout.n_pieces(); ++p)
    if (!layout.piece(p).frozen) trained_elements += layout.piece(p).count, ++trained_pieces;
  BOOST_REQUIRE(trained_pieces < layout.n_pieces());
  PhaseTimers timers;
  DataParallel dp(layout, comm, cpu_ops, timers, true, false);
  dp.init_owned_params(model->params(), kSeed, cfg.init_std);
  BOOST_TEST(comm.asked_of(CollectiveKind::all_gather).first == model->params().total());
  BOOST_TEST(comm.asked_of(CollectiveKind::all_gather).second == layout.n_pieces());
  Optimizer optimizer(layout, cpu_ops, AdamWConfig{}, 1.0f);
  StepContext ctx{*model, dp, optimizer, timers, comm, kSeed, false};
  for (int step = 1; step <= 2; ++step) {
    comm.asked.clear();
    train_step(ctx, {make_synthetic_batch(cfg, {int64_t(world.rank)}, true, kSeed)}, step, 1e-3);
    for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
      BOOST_TEST(comm.asked_of(kind).first == trained_elements, collective_name(kind));
      BOOST_TEST(comm.asked_of(kind).second == trained_pieces, collective_name(kind));
    }
  }
}
