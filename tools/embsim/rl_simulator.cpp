// The simulator role (rl_roles.hpp): per-environment slots over one MuJoCo model, replies
// executed as they come, segments flushed to the trainer. With rl.advantage = grpo, consecutive
// slots form groups of rl.group_size that reset to the same initial state (one episode key) and
// wait for each other between episodes; each episode goes to the trainer as one segment.
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/error.hpp"
#include "observation.hpp"
#include "rl/backoff.hpp"
#include "rl/channel.hpp"
#include "rl_messages.hpp"
#include "rl_roles.hpp"
#include "rl_shutdown.hpp"
#include "sim/env.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The distance the task's shaped reward rewards shrinking (Meta-World style): reach the goal;
// push and pick_place: get the hand to the block (half weight), then the block to the goal.
double task_distance(const Env& env) {
  auto dist = [](std::array<double, 3> a, std::array<double, 3> b, bool planar) {
    const double dx = a[0] - b[0], dy = a[1] - b[1], dz = planar ? 0.0 : a[2] - b[2];
    return std::sqrt(dx * dx + dy * dy + dz * dz);
  };
  if (env.task().name == "reach") return dist(env.tip(), env.goal(), false);
  const bool planar = env.task().name == "push";
  return 0.5 * dist(env.tip(), env.block(), planar) + dist(env.block(), env.goal(), planar);
}

constexpr double kShapingScale = 10.0;  // per metre of progress; success is worth 1

// rl.reward of one executed chunk; `distance_before` is task_distance before it ran.
float chunk_reward(RlOptions::Reward kind, const Env& env, double distance_before, const std::vector<float>& actions,
                   int action_dim) {
  switch (kind) {
    case RlOptions::Reward::sparse: return float(env.success());
    case RlOptions::Reward::shaped:
      return float(env.success() + kShapingScale * (distance_before - task_distance(env)));
    case RlOptions::Reward::action_probe: {
      double sum = 0;
      const size_t steps = actions.size() / size_t(action_dim);
      for (size_t h = 0; h < steps; ++h) sum += actions[h * size_t(action_dim)];
      return float(sum / double(std::max<size_t>(steps, 1)));
    }
  }
  return 0.f;
}

}  // namespace

nlohmann::json run_simulator(const RlSetup& s) {
  const RlOptions& o = s.o;
  const RlGroups& g = s.groups;
  const TaskSpec& task = s.task;
  const int E = o.envs_per_simulator, first_env = g.index * E;
  const int total_envs = int(g.simulators.size()) * E;
  const bool grpo = o.advantage == Advantage::grpo;
  const int G = grpo ? o.group_size : 1;  // environments sharing each reset
  const int generator = g.generators[size_t(generator_of_simulator(g.index, int(g.generators.size())))];
  const int trainer = g.trainers[size_t(g.index % int(g.trainers.size()))];
  ChannelSender to_generator(MPI_COMM_WORLD, generator, kTagRequest, o.channel_capacity);
  ChannelReceiver from_generator(MPI_COMM_WORLD, generator, kTagReply);
  ChannelSender to_trainer(MPI_COMM_WORLD, trainer, kTagSegment, o.channel_capacity);
  StopSignal stop(g);
  Outbox requests(to_generator), segments(to_trainer);
  Watchdog watchdog(o.watchdog_s);
  Backoff backoff;

  auto model = load_task_model(task, o.mjcf_dir);
  ObservationEncoder encoder(o.observation, model.get());
  struct Slot {
    std::unique_ptr<Env> env;
    int64_t episode = 0, started = 0;
    int32_t chunk = 0, round_chunks = 0;
    bool awaiting = false;
    bool between_episodes = false;  // grpo: done, waiting for its group to finish theirs
    Clock::time_point ready_at;
    double modelled_s = 0;  // of the chunk it is doing
    ActionRequest request;  // the observation the pending chunk answers
    Segment segment;
  };
  std::vector<Slot> slots(static_cast<size_t>(E));
  // A group's members start their n-th episodes together, so they share its key.
  auto start_episode = [&](Slot& slot, int e) {
    slot.episode = int64_t((first_env + e) / G) + slot.started++ * (total_envs / G);
    slot.env->reset(o.seed, EpisodeSplit::collect, slot.episode);
    slot.chunk = 0;
    slot.between_episodes = false;
  };
  // grpo: once the last of e's group is done, the whole group starts its next episode.
  auto end_episode = [&](int e) {
    const int first = e / G * G;
    slots[size_t(e)].between_episodes = true;
    for (int m = first; m < first + G; ++m)
      if (!slots[size_t(m)].between_episodes) return;
    for (int m = first; m < first + G; ++m) start_episode(slots[size_t(m)], m);
  };
  for (int e = 0; e < E; ++e) {
    slots[size_t(e)].env = std::make_unique<Env>(task, model);
    slots[size_t(e)].segment.env = first_env + e;
    start_episode(slots[size_t(e)], e);
  }
  const bool rounds = o.mode != RlMode::async;
  int32_t round = 0;
  int64_t env_steps = 0, episodes = 0, successes = 0, chunks = 0, stragglers_waited = 0;
  double modelled_s = 0;
  int64_t late_chunks = 0;
  const bool cost_on = s.cost.on();
  LoopClock clock;
  const Clock::time_point run_start = Clock::now();
  std::vector<std::vector<uint8_t>> frames;

  auto flush = [&](Slot& slot) {
    slot.segment.next_state.assign(size_t(task.state_dim), 0.f);
    slot.env->observe(slot.segment.next_state.data());
    slot.segment.episode = slot.episode;
    segments.push(encode(slot.segment));
    slot.segment.transitions.clear();
  };
  // eligible_at: when the slot could ask (its chunk's end; sync: the rank's slowest chunk's end).
  auto request = [&](Slot& slot, int e, Clock::time_point eligible_at) {
    // Asking later than that by more than a fifth of its modelled chunk: real compute (this
    // rank's, on shared cores) showed through the model.
    const double late_s = seconds(Clock::now() - eligible_at);
    if (cost_on && slot.modelled_s > 0 && late_s > 0.2 * slot.modelled_s) ++late_chunks;
    ActionRequest& r = slot.request;
    r.env = first_env + e, r.episode = slot.episode, r.chunk = slot.chunk, r.round = round;
    r.obs.embodiment = task.embodiment;
    r.obs.state.assign(size_t(task.state_dim), 0.f);
    slot.env->observe(r.obs.state.data());
    encoder.render(*slot.env, frames);
    r.obs.vl.clear();
    encoder.features(frames, task.instructions[size_t(slot.episode % int64_t(task.instructions.size()))], r.obs.vl);
    requests.push(encode(r));
    slot.awaiting = true;
  };

  for (;;) {
    const Clock::time_point loop_start = Clock::now();
    bool worked = false;
    if (stop.poll()) break;
    // Replies: execute the chunk now; the environment is ready again after its modelled time.
    std::vector<uint8_t> bytes;
    while (from_generator.try_recv(bytes)) {
      worked = true;
      ActionReply reply;
      decode(bytes, reply);
      const int e = reply.env - first_env;
      EMB_CHECK(e >= 0 && e < E, "rl simulator ", g.index, ": a reply for environment ", reply.env);
      Slot& slot = slots[size_t(e)];
      EMB_CHECK(slot.awaiting, "rl simulator ", g.index, ": an unexpected reply for environment ", reply.env);
      slot.awaiting = false;
      const double before = task_distance(*slot.env);
      int steps = 0;
      for (size_t h = 0; h * task.action_dim < reply.actions.size() && !slot.env->done(); ++h, ++steps)
        slot.env->step(&reply.actions[h * size_t(task.action_dim)]);
      if (o.fail_rank == g.world_rank && chunks + 1 >= o.fail_step)
        EMB_CHECK(false, "debug.fail_rank: simulator rank ", g.world_rank, " fails at chunk ", chunks + 1);
      Transition t;
      t.obs = std::move(slot.request.obs);
      t.version = reply.version, t.k_first = reply.k_first, t.k_count = reply.k_count, t.logp_behav = reply.logp;
      t.chain = std::move(reply.chain);
      t.success = slot.env->success(), t.done = slot.env->done(), t.steps = steps;
      t.reward = chunk_reward(o.reward, *slot.env, before, reply.actions, task.action_dim);
      slot.segment.transitions.push_back(std::move(t));
      env_steps += steps, ++chunks, ++slot.chunk, ++slot.round_chunks;
      const double modelled =
          cost_on ? s.cost.sim_chunk_seconds(uint64_t(first_env + e), slot.started * 100000 + slot.chunk, steps) : 0.0;
      modelled_s += modelled;
      slot.ready_at = Clock::now() + std::chrono::microseconds(int64_t(modelled * 1e6));
      slot.modelled_s = modelled;
      const bool round_end = rounds && slot.round_chunks == s.round_chunks_per_env;
      const bool segment_full = !grpo && int(slot.segment.transitions.size()) == o.segment_chunks;
      if (slot.env->done() || segment_full || round_end) flush(slot);
      if (slot.env->done()) {
        ++episodes, successes += slot.env->success();
        end_episode(e);
      }
    }
    // A round ends when every environment did its chunks: the next round's may start.
    if (rounds) {
      bool all_done = true;
      for (const Slot& slot : slots) all_done = all_done && !slot.awaiting && slot.round_chunks == s.round_chunks_per_env;
      if (all_done) {
        for (Slot& slot : slots) slot.round_chunks = 0;
        ++round;
      }
    }
    // Requests: async modes serve every ready slot at once; sync waits for the whole rank.
    const Clock::time_point now = Clock::now();
    auto ready = [&](const Slot& slot) {
      return !slot.awaiting && !slot.between_episodes && slot.ready_at <= now && (!rounds || slot.round_chunks < s.round_chunks_per_env);
    };
    if (o.mode == RlMode::sync) {
      bool all_ready = true;
      int idle = 0;
      Clock::time_point slowest = now - std::chrono::hours(1);
      for (const Slot& slot : slots) {
        all_ready = all_ready && !slot.awaiting && slot.ready_at <= now, idle += !slot.awaiting;
        slowest = std::max(slowest, slot.ready_at);
      }
      if (all_ready && idle == E) {
        for (int e = 0; e < E; ++e)
          if (ready(slots[size_t(e)])) request(slots[size_t(e)], e, slowest), worked = true;
      } else if (idle == E) {
        ++stragglers_waited;
      }
    } else {
      for (int e = 0; e < E; ++e)
        if (ready(slots[size_t(e)])) request(slots[size_t(e)], e, slots[size_t(e)].ready_at), worked = true;
    }
    worked = requests.flush() | segments.flush() | worked;
    to_generator.progress(), to_trainer.progress();
    if (worked) {
      backoff.reset();
      watchdog.progress();
      clock.busy_since(loop_start);
    } else {
      watchdog.check(g, "a reply from generator rank " + std::to_string(generator) + " or the stop from trainer 0");
      backoff.wait();
      clock.wait_since(loop_start);
    }
  }
  // With the model on, an environment is busy for its modelled chunks (its own core of a
  // cluster's simulator node); the rank's busy fraction is their share of E environments' time.
  const double loop_s = seconds(Clock::now() - run_start);
  if (cost_on) clock.set(Utilisation{modelled_s / E, std::max(0.0, loop_s - modelled_s / E)});
  drain_and_finish(g, {&from_generator}, {&to_generator, &to_trainer}, o.watchdog_s);
  return {{"role", "simulator"}, {"rank", g.world_rank}, {"env_steps", env_steps}, {"chunks", chunks},
          {"episodes", episodes}, {"successes", successes}, {"modelled_sim_s", modelled_s},
          {"pacer", {{"stages", chunks}, {"overruns", late_chunks}}},
          {"lockstep_waits", stragglers_waited}, {"time", clock.json()}};
}

}  // namespace emb
