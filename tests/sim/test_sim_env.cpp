// The simulated tasks (src/sim): the reset/step API, determinism of physics and rendering for
// one episode key, the experts' success on fixed episodes, and the input errors.
#define BOOST_TEST_MODULE sim_env
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "sim/env.hpp"
#include "sim/expert.hpp"
#include "sim/renderer.hpp"

using namespace emb;

namespace {

constexpr uint64_t kSeed = 11;

std::vector<float> observe(const Env& env) {
  std::vector<float> s(size_t(env.task().state_dim));
  env.observe(s.data());
  return s;
}

// Runs the expert for `steps` steps (or to the end) and returns every observation.
std::vector<std::vector<float>> expert_trajectory(Env& env, int64_t episode, int steps) {
  Expert expert;
  env.reset(kSeed, EpisodeSplit::collect, episode);
  std::vector<std::vector<float>> obs{observe(env)};
  std::vector<float> action(size_t(env.task().action_dim));
  for (int i = 0; i < steps && !env.done(); ++i) {
    expert.act(env, action.data());
    env.step(action.data());
    obs.push_back(observe(env));
  }
  return obs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(reset_and_step) {
  for (const TaskSpec& t : all_tasks()) {
    Env env(t, load_task_model(t, default_mjcf_dir()));
    env.reset(kSeed, EpisodeSplit::eval, 3);
    BOOST_TEST(env.steps() == 0);
    BOOST_TEST(!env.done(), t.name);
    for (float x : observe(env)) BOOST_TEST_REQUIRE(std::isfinite(x));
    const std::vector<float> before = observe(env);
    const std::vector<float> big(size_t(t.action_dim), 5.f), one(size_t(t.action_dim), 1.f);
    env.step(big.data());  // clipped to 1: the same move as a unit action from the same state
    const std::vector<float> after_big = observe(env);
    env.reset(kSeed, EpisodeSplit::eval, 3);
    BOOST_TEST(observe(env) == before, t.name << ": reset restores the episode's initial state");
    env.step(one.data());
    BOOST_TEST(observe(env) == after_big, t.name);
    BOOST_TEST(env.steps() == 1);
    const std::vector<float> zero(size_t(t.action_dim), 0.f);
    while (!env.done()) env.step(zero.data());
    BOOST_TEST(env.steps() == t.max_steps, t.name << ": holding still never succeeds");
    BOOST_TEST(!env.success());
  }
}

BOOST_AUTO_TEST_CASE(same_episode_key_same_trajectory_and_images) {
  for (const TaskSpec& t : all_tasks()) {
    auto model = load_task_model(t, default_mjcf_dir());
    Env a(t, model), b(t, model);
    BOOST_TEST(expert_trajectory(a, 5, 25) == expert_trajectory(b, 5, 25), t.name);
    Renderer renderer(model.get());
    std::vector<uint8_t> image_a, image_b;
    renderer.render(a.data(), "top", image_a);
    renderer.render(b.data(), "top", image_b);
    BOOST_TEST(image_a.size() == size_t(renderer.height()) * renderer.width() * 3);
    BOOST_TEST((image_a == image_b), t.name << ": rendering the same state twice gives the same image");
    int lit = 0;
    for (uint8_t p : image_a) lit += p > 0;
    BOOST_TEST(lit > int(image_a.size() / 2), t.name << ": the image shows the scene");

    a.reset(kSeed, EpisodeSplit::collect, 6);
    b.reset(kSeed, EpisodeSplit::eval, 5);
    Env c(t, model);
    c.reset(kSeed, EpisodeSplit::collect, 5);
    BOOST_TEST(observe(a) != observe(c), t.name << ": another episode starts elsewhere");
    BOOST_TEST(observe(b) != observe(c), t.name << ": eval episode 5 is not collect episode 5");
  }
}

BOOST_AUTO_TEST_CASE(experts_succeed_on_fixed_episodes) {
  for (const TaskSpec& t : all_tasks()) {
    Env env(t, load_task_model(t, default_mjcf_dir()));
    int successes = 0;
    const int episodes = 20;
    for (int e = 0; e < episodes; ++e) {
      expert_trajectory(env, e, t.max_steps);
      successes += env.success();
    }
    BOOST_TEST(successes >= 19, t.name << ": expert succeeded in " << successes << "/" << episodes);
  }
}

BOOST_AUTO_TEST_CASE(bad_task_and_missing_mjcf) {
  try {
    task_spec("stack");
    BOOST_FAIL("unknown task accepted");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()) == "unknown task 'stack' (known tasks: reach, push, pick_place)");
    BOOST_TEST(e.exit_code() == kExitInput);
  }
  try {
    load_task_model(task_spec("push"), "/nonexistent/mjcf");
    BOOST_FAIL("missing MJCF accepted");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).rfind("/nonexistent/mjcf/push.xml: missing MJCF file", 0) == 0, e.what());
  }
}
