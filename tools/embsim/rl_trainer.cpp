// The trainer role (rl_roles.hpp): segments from its simulators into RlLearner, micro-batch
// steps (async: as soon as one is there; rounds: once the round is complete), weights pushed
// to the generators after every update, progress lines, checkpoints and the stop signal.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "kernels/make_ops.hpp"
#include "rl/backoff.hpp"
#include "rl/channel.hpp"
#include "rl/stage_pacer.hpp"
#include "rl/weight_push.hpp"
#include "rl_checkpoint.hpp"
#include "rl_learner.hpp"
#include "rl_messages.hpp"
#include "rl_roles.hpp"
#include "rl_shutdown.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

// Every trainer must take a micro-step together (gradients are summed): they agree on the
// smallest number of steps any of them can take now.
int64_t agreed_micro_steps(int64_t mine, MPI_Comm comm) {
  return min_over_ranks(comm, mine);
}

}  // namespace

nlohmann::json run_trainer(const RlSetup& s) {
  const RlOptions& o = s.o;
  const RlGroups& g = s.groups;
  const int T = int(g.trainers.size());
  std::vector<std::unique_ptr<ChannelReceiver>> from_sim;
  for (size_t sim = 0; sim < g.simulators.size(); ++sim)
    if (int(sim) % T == g.index)
      from_sim.push_back(std::make_unique<ChannelReceiver>(MPI_COMM_WORLD, g.simulators[sim], kTagSegment));
  LearnerConfig lc;
  lc.flow_steps = s.flow_steps, lc.exec_steps = s.exec_steps;
  lc.task_action_dim = s.task.action_dim, lc.task_state_dim = s.task.state_dim;
  lc.noise_level = o.noise_level, lc.gamma = o.gamma, lc.gae_lambda = o.gae_lambda, lc.lr = o.lr;
  lc.value_lr = o.value_lr, lc.ppo = o.ppo, lc.max_staleness = o.max_staleness;
  lc.micro_chunks = o.micro_chunks / T, lc.micro_per_update = o.update_chunks / o.micro_chunks;
  // Versions count from the SFT start: a resumed run is past the warm-up. GRPO has no critic to warm up.
  lc.policy_from_version = o.advantage == Advantage::grpo ? 0 : o.critic_warmup;
  lc.ppo_epochs = o.ppo_epochs, lc.value_steps = o.value_steps;
  lc.advantage = o.advantage, lc.group_size = o.group_size;
  const std::unique_ptr<Ops> ops = make_ops(o.backend, s.local_rank);
  RlLearner learner(s.cfg, lc, s.init_params, *ops, g.role_comm, o.seed);
  learner.restore(s.start_version, s.start_value_steps, s.start_policy_steps);
  if (!s.value_state.empty()) restore_value_head(learner.value_head(), s.value_state);
  if (!s.exp_avg.empty()) {
    std::vector<float> m = s.exp_avg, v = s.exp_avg_sq;
    learner.optimizer().upload_state(OptimizerState{m.data(), v.data()});
  }
  std::unique_ptr<WeightPublisher> publisher;
  if (g.index == 0) publisher = std::make_unique<WeightPublisher>(MPI_COMM_WORLD, g.generators, kTagWeights);
  StopSignal stop(g);
  LoopClock clock;
  StagePacer pacer(s.cost.on());
  Watchdog watchdog(o.watchdog_s);
  Backoff backoff;
  const Clock::time_point start = Clock::now();
  const int64_t round_share = int64_t(o.update_chunks) / T;
  nlohmann::json curve = nlohmann::json::array();
  int64_t last_episodes = 0, last_successes = 0, last_transitions = 0;
  double last_reward = 0;
  std::string last_ckpt;

  while (learner.version() < s.start_version + o.updates) {
    const Clock::time_point loop_start = Clock::now();
    bool worked = false;
    std::vector<uint8_t> bytes;
    for (auto& r : from_sim)
      while (r->try_recv(bytes)) {
        Segment seg;
        decode(bytes, seg);
        learner.add(seg);
        worked = true;
      }
    // async streams micro-batches; rounds wait for the whole round's share.
    const bool can_start = o.mode == RlMode::async || learner.micro_in_update() > 0 || learner.waiting() >= round_share;
    const int64_t possible = can_start ? learner.waiting() / lc.micro_chunks : 0;
    if (agreed_micro_steps(possible, g.role_comm) > 0) {
      pacer.begin();
      const int64_t before = learner.version();
      learner.step_micro();
      pacer.finish(s.cost.train_seconds(o.micro_chunks / T));
      worked = true;
      if (learner.version() > before) {
        // The run's totals over every trainer's simulators (the trainers step together, so
        // this collective is matched): env steps trained on, episodes ended, successes, drops.
        const LearnerStats& st = learner.stats();
        int64_t totals[7] = {st.env_steps,     st.episodes,    st.successes,     st.filtered,
                             st.dropped_stale, st.transitions, st.uniform_groups};
        sum_over_ranks(g.role_comm, totals, 7);
        double reward = st.reward_sum;
        sum_over_ranks(g.role_comm, &reward, 1);
        if (g.index == 0) {
          publisher->publish(learner.params().data(), int64_t(learner.params().size()), learner.version());
          const int64_t eps = totals[1] - last_episodes, wins = totals[2] - last_successes;
          const double reward_per_chunk = (reward - last_reward) / double(std::max<int64_t>(1, totals[5] - last_transitions));
          const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
          const int64_t done = learner.version() - s.start_version;
          const double eta = elapsed / double(done) * double(o.updates - done);
          std::printf("rl update %3lld/%d | env steps %lld | %.1f env steps/s | episodes %lld success %.2f | "
                      "reward/chunk %.3f | policy loss %.4f value loss %.4f | filtered %lld stale dropped %lld | "
                      "ETA %02d:%02d",
                      (long long)done, o.updates, (long long)totals[0], double(totals[0]) / elapsed, (long long)eps,
                      eps ? double(wins) / double(eps) : 0.0, reward_per_chunk, st.policy_loss, st.value_loss,
                      (long long)totals[3],
                      (long long)totals[4], int(eta) / 60, int(eta) % 60);
          if (o.advantage == Advantage::grpo) std::printf(" | uniform groups %lld", (long long)totals[6]);
          std::printf("\n");
          std::fflush(stdout);
          curve.push_back({{"version", learner.version()}, {"env_steps", totals[0]}, {"seconds", elapsed},
                           {"episodes", eps}, {"successes", wins}, {"reward_per_chunk", reward_per_chunk}});
        }
        last_episodes = totals[1], last_successes = totals[2], last_transitions = totals[5], last_reward = reward;
      }
      const bool last = learner.version() == s.start_version + o.updates;
      if (g.index == 0 && learner.version() > before &&
          (last || (o.ckpt_every > 0 && learner.version() % o.ckpt_every == 0)))
        last_ckpt = save_rl_checkpoint(s, learner);
    }
    if (publisher) publisher->progress();
    if (worked) {
      backoff.reset();
      watchdog.progress();
      clock.busy_since(loop_start);
    } else {
      watchdog.check(g, "segments from its simulators");
      backoff.wait();
      clock.wait_since(loop_start);
    }
  }
  if (g.index == 0) stop.send_to_all();
  std::vector<ChannelReceiver*> receivers;
  for (auto& r : from_sim) receivers.push_back(r.get());
  drain_and_finish(g, receivers, {}, o.watchdog_s, publisher.get());
  const LearnerStats& st = learner.stats();
  nlohmann::json staleness = nlohmann::json::object();
  for (auto& [k, n] : st.staleness) staleness[std::to_string(k)] = n;
  return {{"role", "trainer"}, {"rank", g.world_rank}, {"version", learner.version()},
          {"transitions", st.transitions}, {"env_steps", st.env_steps}, {"used", st.used}, {"filtered", st.filtered},
          {"clipped", st.clipped}, {"dropped_stale", st.dropped_stale}, {"staleness", staleness},
          {"uniform_groups", st.uniform_groups},
          {"episodes", st.episodes}, {"successes", st.successes}, {"curve", curve}, {"checkpoint", last_ckpt},
          {"time", clock.json()}, {"pacer", pacer_json(pacer)}};
}

}  // namespace emb
