// embsim on 1, 2 and 3 ranks: a collected file passes the packed-format verifier and holds the
// same episodes at any rank count; evaluation gives the same per-episode outcomes whatever
// the number of ranks (each rank batching its environments into one policy call) as one rank
// running them all; the gr00t policy acts the same on an observation alone or in a batch, and
// refuses a checkpoint too narrow for the task; a checkpoint directory names its checkpoints.
#define BOOST_TEST_MODULE embsim
#include <boost/test/unit_test.hpp>
#include <mpi.h>

#include <filesystem>

#include "collect.hpp"
#include "comm/world_fixture.hpp"
#include "config/deck.hpp"
#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_verify.hpp"
#include "eval.hpp"
#include "gr00t_policy.hpp"
#include "app/run_config_from_deck.hpp"
#include "model/presets.hpp"
#include "checkpoint/checkpoint.hpp"
#include "checkpoint/checkpoint_dir.hpp"

using namespace emb;

namespace {

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

int rank() { return test_world().rank; }
int world() { return test_world().size; }

// A directory of this rank count's run (ctest may run the np1/np2/np3 variants at once).
std::string scratch(const std::string& name) {
  std::string dir = str("outputs/test_embsim_np", world(), "/", name);
  if (rank() == 0) std::filesystem::create_directories(dir);
  MPI_Barrier(MPI_COMM_WORLD);
  return dir;
}

// An untrained closed_loop_gr00t checkpoint (deck overrides in `sets`), written by rank 0.
std::string untrained_checkpoint(const std::string& dir, const std::vector<std::string>& sets) {
  std::string path;
  if (rank() == 0) {
    Deck deck = load_deck("inputs/closed_loop_gr00t.in", sets);
    std::unique_ptr<Model> model = make_model(run_config_from_deck(deck).model, nullptr);  // parameters only
    const ParamRegistry& reg = model->params();
    std::vector<float> params(size_t(reg.total())), zeros(params.size(), 0.f);
    model->init_params(params.data(), 3);
    CheckpointMeta meta;
    meta.step = 1, meta.seed = 3, meta.preset = model->config().preset, meta.deck_text = deck.resolved_text();
    path = save_checkpoint(MPI_COMM_SELF, dir, reg, ShardLayout(reg, ShardMode::none, 0, 1), params.data(),
                           OptimizerState{zeros.data(), zeros.data()}, meta);
  }
  int n = int(path.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  path.resize(size_t(n));
  MPI_Bcast(path.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

EvalOptions eval_options(const std::string& task, int64_t episodes) {
  EvalOptions o;
  o.tasks = {task}, o.episodes = episodes, o.seed = 5, o.mjcf_dir = default_mjcf_dir(), o.videos = 0;
  o.observation.views = {"top"};
  return o;
}

}  // namespace

BOOST_AUTO_TEST_CASE(collected_file_verifies_at_any_rank_count) {
  CollectOptions o;
  o.task = "push", o.episodes = 5, o.seed = 3, o.mjcf_dir = default_mjcf_dir();
  o.output = scratch("collect") + "/push.h5";
  CollectSummary s = collect(MPI_COMM_WORLD, o, "test_embsim");
  if (rank() != 0) return;
  // The same episodes as one process running the expert on each collect episode in turn.
  const TaskSpec& t = task_spec("push");
  Env env(t, load_task_model(t, o.mjcf_dir));
  Expert expert;
  std::vector<float> action(size_t(t.action_dim));
  int64_t steps = 0;
  for (int64_t e = 0; e < o.episodes; ++e) {
    env.reset(o.seed, EpisodeSplit::collect, e), expert.reset();
    while (!env.done()) expert.act(env, action.data()), env.step(action.data());
    BOOST_TEST_REQUIRE(env.success());
    steps += env.steps();
  }
  BOOST_TEST(s.successes == o.episodes);
  BOOST_TEST(s.steps == steps);
  PackedSummary v = verify_packed(H5File::open(o.output));
  BOOST_TEST(v.episodes == o.episodes);
  BOOST_TEST(v.steps == steps);
  BOOST_TEST(v.family == "gr00t");
}

BOOST_AUTO_TEST_CASE(eval_outcomes_do_not_depend_on_the_rank_count) {
  for (const char* name : {"expert", "random"}) {
    const EvalOptions o = eval_options(name == std::string("expert") ? "push" : "reach", 7);
    std::unique_ptr<Policy> policy = make_baseline_policy(name, o.seed);
    TaskResult split = evaluate_task(MPI_COMM_WORLD, *policy, task_spec(o.tasks[0]), o, "");
    if (rank() != 0) continue;
    std::unique_ptr<Policy> alone = make_baseline_policy(name, o.seed);
    TaskResult serial = evaluate_task(MPI_COMM_SELF, *alone, task_spec(o.tasks[0]), o, "");
    BOOST_TEST(split.success == serial.success, name);
    BOOST_TEST(split.lengths == serial.lengths, name);
    if (name == std::string("expert")) BOOST_TEST(split.successes() >= 6);
  }
  const std::string ckpt = untrained_checkpoint(scratch("ckpt"), {});
  const EvalOptions o = eval_options("reach", 5);
  Gr00tPolicy policy(ckpt, {}, o.seed, 0);
  TaskResult split = evaluate_task(MPI_COMM_WORLD, policy, task_spec("reach"), o, "");
  if (rank() != 0) return;
  Gr00tPolicy alone(ckpt, {}, o.seed, 0);
  TaskResult serial = evaluate_task(MPI_COMM_SELF, alone, task_spec("reach"), o, "");
  BOOST_TEST(split.success == serial.success);
  BOOST_TEST(split.lengths == serial.lengths);
}

BOOST_AUTO_TEST_CASE(gr00t_policy_batches_and_checks_the_task) {
  const std::string dir = scratch("ckpt_narrow");
  const std::string ckpt = untrained_checkpoint(dir, {"model.state_dim=16"});
  if (rank() != 0) return;
  BOOST_TEST(verified_checkpoints(dir, CheckedTensors::parameters) == std::vector<std::string>{ckpt}, "a checkpoint directory lists its checkpoints");
  BOOST_TEST(verified_checkpoints(ckpt, CheckedTensors::parameters) == std::vector<std::string>{ckpt});
  Gr00tPolicy narrow(ckpt, {}, 1, 0);
  BOOST_CHECK_NO_THROW(narrow.check_task(task_spec("reach"), 32));
  try {
    narrow.check_task(task_spec("push"), 32);
    BOOST_FAIL("a checkpoint narrower than the task was accepted");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("narrower than task push's 22/2") != std::string::npos, e.what());
  }
  BOOST_CHECK_THROW(narrow.check_task(task_spec("reach"), 64), Error);
  BOOST_TEST(int(narrow.vl_source().kind) == int(CheckpointVl::Kind::stand_in),
             "collected files: the stand-in encoder");

  const TaskSpec& t = task_spec("reach");
  auto model = load_task_model(t, default_mjcf_dir());
  ObservationOptions oo;
  const std::unique_ptr<VlEncoder> vl = narrow.make_vl_encoder(oo);
  ObservationEncoder obs(oo, model.get(), vl.get());
  std::vector<std::unique_ptr<Env>> envs;
  std::vector<PolicyInput> inputs;
  std::vector<std::vector<uint8_t>> frames;
  for (int64_t e = 0; e < 3; ++e) {
    envs.push_back(std::make_unique<Env>(t, model));
    envs.back()->reset(1, EpisodeSplit::eval, e);
    PolicyInput in;
    in.env = envs.back().get(), in.episode = e, in.instruction = t.instructions[size_t(e)];
    in.state.resize(size_t(t.state_dim));
    envs.back()->observe(in.state.data());
    obs.render(*envs.back(), frames);
    obs.features(frames, in.instruction, in.vl);
    inputs.push_back(in);
  }
  std::vector<std::vector<float>> batched, single;
  narrow.act(inputs, batched);
  BOOST_TEST_REQUIRE(batched.size() == inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    narrow.act({inputs[i]}, single);
    BOOST_TEST_REQUIRE(single[0].size() == size_t(narrow.exec_steps() * t.action_dim));
    for (size_t k = 0; k < single[0].size(); ++k) BOOST_TEST(std::abs(single[0][k] - batched[i][k]) <= 1e-5);
  }
}
