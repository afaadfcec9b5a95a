// The simulator role (rl_roles.hpp): per-environment slots over one MuJoCo model, replies
// executed as they come, segments flushed to the trainer. With rl.advantage = grpo, consecutive
// slots form groups of rl.group_size that reset to the same initial state (one episode key) and
// wait for each other between episodes; each episode goes to the trainer as one segment.
// An environment whose physics diverges (Env::diverged: a non-finite state, or MuJoCo's own
// reset of it) starts a new episode; its unsent chunks are never trained on, and the resets are
// counted (summary.json "diverged_resets", "diverged_chunks"). Round modes still send them, as a
// segment marked diverged that the learner drops, because a round is complete only when all of
// its chunks arrived. train.resume of a round mode restores the slots at the checkpoint's round
// boundary (rl_sim_state.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "checkpoint/checkpoint_dir.hpp"
#include "core/error.hpp"
#include "core/injected_failure.hpp"
#include "rl/backoff.hpp"
#include "rl/channel.hpp"
#include "rl/roles/rl_checkpoint.hpp"
#include "rl/roles/rl_messages.hpp"
#include "rl/roles/rl_roles.hpp"
#include "rl/roles/rl_shutdown.hpp"
#include "rl/roles/rl_sim_state.hpp"
#include "rl/roles/vl_observer.hpp"
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

// One environment of the rank and where it is in its episode, chunk and round.
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
  std::vector<float> actions;  // executed in this episode (train.resume replays them)
};

// The simulator rank's loop: its slots, its channels and its totals.
class SimulatorLoop {
 public:
  explicit SimulatorLoop(const RlSetup& s);
  // Turns until trainer 0 says stop; then this rank's statistics.
  nlohmann::json run();

 private:
  void start_episode(Slot& slot, int e);
  void restore(const SimState& state);
  void save_state(int64_t version) const;
  void diverged(Slot& slot, int e, Transition chunk);
  void end_episode(int e);
  void flush(Slot& slot, bool diverged = false);
  void request(Slot& slot, int e, Clock::time_point eligible_at);
  bool receive_replies();
  void execute(ActionReply& reply, Slot& slot, int e);
  void end_round_when_done();
  bool send_requests();
  nlohmann::json summary(double loop_s);

  const RlSetup& s_;
  const RlOptions& o_;
  const RlGroups& g_;
  const TaskSpec& task_;
  const int E_, first_env_, total_envs_;
  const bool grpo_;
  const int G_;  // environments sharing each reset
  const int generator_, trainer_;
  const bool rounds_, cost_on_;
  ChannelSender to_generator_;
  ChannelReceiver from_generator_;
  ChannelSender to_trainer_;
  StopSignal stop_;
  Outbox requests_, segments_;
  RoleLoop loop_;
  std::shared_ptr<const mjModel> model_;
  std::unique_ptr<VlObserver> observer_;
  std::vector<Slot> slots_;
  int32_t round_ = 0;
  int64_t env_steps_ = 0, episodes_ = 0, successes_ = 0, chunks_ = 0, stragglers_waited_ = 0, late_chunks_ = 0;
  int64_t diverged_resets_ = 0, diverged_chunks_ = 0;
  double modelled_s_ = 0;
};

SimulatorLoop::SimulatorLoop(const RlSetup& s)
    : s_(s),
      o_(s.o),
      g_(s.groups),
      task_(s.task),
      E_(o_.envs_per_simulator),
      first_env_(g_.index * E_),
      total_envs_(int(g_.simulators.size()) * E_),
      grpo_(o_.advantage == Advantage::grpo),
      G_(grpo_ ? o_.group_size : 1),
      generator_(g_.generators[size_t(generator_of_simulator(g_.index, int(g_.generators.size())))]),
      trainer_(g_.trainers[size_t(g_.index % int(g_.trainers.size()))]),
      rounds_(o_.mode != RlMode::async),
      cost_on_(s.cost.on()),
      to_generator_(MPI_COMM_WORLD, generator_, kTagRequest, o_.channel_capacity),
      from_generator_(MPI_COMM_WORLD, generator_, kTagReply),
      to_trainer_(MPI_COMM_WORLD, trainer_, kTagSegment, o_.channel_capacity),
      stop_(g_),
      requests_(to_generator_),
      segments_(to_trainer_),
      loop_(o_.watchdog_s),
      model_(load_task_model(task_, o_.mjcf_dir)),
      observer_(s.vl_observer(model_.get())),
      slots_(static_cast<size_t>(E_)) {
  for (int e = 0; e < E_; ++e) {
    slots_[size_t(e)].env = std::make_unique<Env>(task_, model_);
    slots_[size_t(e)].segment.env = first_env_ + e;
    start_episode(slots_[size_t(e)], e);
  }
  if (!s.resume_dir.empty() && rounds_) restore(load_sim_state(sim_state_path(s.resume_dir, s.start_version, g_.index)));
}

// Each environment back in its episode: reset to its key, its actions replayed.
void SimulatorLoop::restore(const SimState& state) {
  EMB_CHECK(int(state.slots.size()) == E_, "train.resume: simulator ", g_.index, "'s state has ", state.slots.size(),
            " environments, rl.envs_per_simulator = ", E_);
  for (int e = 0; e < E_; ++e) {
    Slot& slot = slots_[size_t(e)];
    const SimSlotState& from = state.slots[size_t(e)];
    slot.episode = from.episode, slot.started = from.started, slot.chunk = int32_t(from.chunk);
    slot.env->reset(o_.seed, EpisodeSplit::collect, slot.episode);
    slot.actions = from.actions;
    for (size_t a = 0; a < slot.actions.size(); a += size_t(task_.action_dim)) slot.env->step(&slot.actions[a]);
  }
  env_steps_ = state.env_steps, episodes_ = state.episodes, successes_ = state.successes, chunks_ = state.chunks;
  diverged_resets_ = state.diverged_resets, diverged_chunks_ = state.diverged_chunks;
}

void SimulatorLoop::save_state(int64_t version) const {
  SimState state;
  for (const Slot& slot : slots_) state.slots.push_back({slot.episode, slot.started, slot.chunk, slot.actions});
  state.env_steps = env_steps_, state.episodes = episodes_, state.successes = successes_, state.chunks = chunks_;
  state.diverged_resets = diverged_resets_, state.diverged_chunks = diverged_chunks_;
  save_sim_state(sim_state_path(o_.ckpt_dir, version, g_.index), state);
}

// A group's members start their n-th episodes together, so they share its key.
void SimulatorLoop::start_episode(Slot& slot, int e) {
  slot.episode = int64_t((first_env_ + e) / G_) + slot.started++ * (total_envs_ / G_);
  slot.env->reset(o_.seed, EpisodeSplit::collect, slot.episode);
  slot.chunk = 0;
  slot.between_episodes = false;
  slot.actions.clear();
}

// The chunk and the episode's unsent chunks are not trained on; the environment starts anew.
// A round needs all of its chunks at the trainer: there they go as a diverged segment.
void SimulatorLoop::diverged(Slot& slot, int e, Transition chunk) {
  if (diverged_resets_++ == 0)
    std::fprintf(stderr, "embsim rl: warning: simulator rank %d: environment %d diverged (non-finite MuJoCo state) in "
                 "episode %lld; it is reset and its unsent chunks are not trained on (summary.json diverged_resets)\n",
                 g_.world_rank, first_env_ + e, (long long)slot.episode);
  diverged_chunks_ += int64_t(slot.segment.transitions.size()) + 1;
  if (rounds_) {
    slot.segment.transitions.push_back(std::move(chunk));
    flush(slot, true);
  }
  slot.segment.transitions.clear();
  if (grpo_) return end_episode(e);
  start_episode(slot, e);
}

// grpo: once the last of e's group is done, the whole group starts its next episode.
void SimulatorLoop::end_episode(int e) {
  const int first = e / G_ * G_;
  slots_[size_t(e)].between_episodes = true;
  for (int m = first; m < first + G_; ++m)
    if (!slots_[size_t(m)].between_episodes) return;
  for (int m = first; m < first + G_; ++m) start_episode(slots_[size_t(m)], m);
}

// A diverged segment's next state stays zero: its state is not finite and the learner drops it unread.
void SimulatorLoop::flush(Slot& slot, bool diverged) {
  slot.segment.next_state.assign(size_t(task_.state_dim), 0.f);
  if (!diverged) {
    slot.env->observe(slot.segment.next_state.data());
    slot.segment.next_state = s_.normalization.state(task_.embodiment, slot.segment.next_state);
  }
  slot.segment.episode = slot.episode;
  slot.segment.diverged = diverged;
  segments_.push(encode(slot.segment));
  slot.segment.transitions.clear();
}

// eligible_at: when the slot could ask (its chunk's end; sync: the rank's slowest chunk's end).
void SimulatorLoop::request(Slot& slot, int e, Clock::time_point eligible_at) {
  // Asking later than that by more than a fifth of its modelled chunk: real compute (this
  // rank's, on shared cores) showed through the model.
  const double late_s = seconds(Clock::now() - eligible_at);
  if (cost_on_ && slot.modelled_s > 0 && late_s > 0.2 * slot.modelled_s) ++late_chunks_;
  ActionRequest& r = slot.request;
  r.env = first_env_ + e, r.episode = slot.episode, r.chunk = slot.chunk, r.round = round_;
  r.obs.embodiment = task_.embodiment;
  r.obs.state.assign(size_t(task_.state_dim), 0.f);
  slot.env->observe(r.obs.state.data());
  r.obs.state = s_.normalization.state(task_.embodiment, r.obs.state);  // as the policy trained on states
  r.obs.vl.clear();
  observer_->observe(*slot.env, task_.instructions[size_t(slot.episode % int64_t(task_.instructions.size()))],
                     r.obs.vl);
  requests_.push(encode(r));
  slot.awaiting = true;
}

// Replies: execute the chunk now; the environment is ready again after its modelled time.
bool SimulatorLoop::receive_replies() {
  bool worked = false;
  std::vector<uint8_t> bytes;
  while (from_generator_.try_recv(bytes)) {
    worked = true;
    ActionReply reply;
    decode(bytes, reply);
    const int e = reply.env - first_env_;
    EMB_CHECK(e >= 0 && e < E_, "rl simulator ", g_.index, ": a reply for environment ", reply.env);
    Slot& slot = slots_[size_t(e)];
    EMB_CHECK(slot.awaiting, "rl simulator ", g_.index, ": an unexpected reply for environment ", reply.env);
    slot.awaiting = false;
    execute(reply, slot, e);
  }
  return worked;
}

void SimulatorLoop::execute(ActionReply& reply, Slot& slot, int e) {
  const double before = task_distance(*slot.env);
  const int64_t A = task_.action_dim;  // the model's actions to the environment's
  s_.normalization.unnormalize_actions(task_.embodiment, reply.actions.data(), int64_t(reply.actions.size()) / A, A, A);
  int steps = 0;
  for (size_t h = 0; h * task_.action_dim < reply.actions.size() && !slot.env->done(); ++h, ++steps)
    slot.env->step(&reply.actions[h * size_t(task_.action_dim)]);
  if (o_.fail_rank == g_.world_rank && chunks_ + 1 >= o_.fail_step)
    fail_injected(o_.fail_how, str("debug.fail_rank: simulator rank ", g_.world_rank, " fails at chunk ", chunks_ + 1));
  env_steps_ += steps, ++chunks_, ++slot.chunk, ++slot.round_chunks;
  Transition t;
  t.obs = std::move(slot.request.obs);
  t.version = reply.version, t.k_first = reply.k_first, t.k_count = reply.k_count, t.logp_behav = reply.logp;
  t.chain = std::move(reply.chain);
  t.steps = steps;
  if (slot.env->diverged()) return diverged(slot, e, std::move(t));
  if (rounds_)  // the episode's actions, replayed on resume; only the round modes save them
    slot.actions.insert(slot.actions.end(), reply.actions.begin(), reply.actions.begin() + steps * task_.action_dim);
  t.success = slot.env->success(), t.done = slot.env->done();
  t.reward = chunk_reward(o_.reward, *slot.env, before, reply.actions, task_.action_dim);
  slot.segment.transitions.push_back(std::move(t));
  const double modelled =
      cost_on_ ? s_.cost.sim_chunk_seconds(uint64_t(first_env_ + e), slot.started * 100000 + slot.chunk, steps) : 0.0;
  modelled_s_ += modelled;
  slot.ready_at = Clock::now() + std::chrono::microseconds(int64_t(modelled * 1e6));
  slot.modelled_s = modelled;
  const bool round_end = rounds_ && slot.round_chunks == s_.round_chunks_per_env;
  const bool segment_full = !grpo_ && int(slot.segment.transitions.size()) == o_.segment_chunks;
  if (slot.env->done() || segment_full || round_end) flush(slot);
  if (slot.env->done()) {
    ++episodes_, successes_ += slot.env->success();
    end_episode(e);
  }
}

// A round ends when every environment did its chunks: the next round's may start.
void SimulatorLoop::end_round_when_done() {
  if (!rounds_) return;
  bool all_done = true;
  for (const Slot& slot : slots_) all_done = all_done && !slot.awaiting && slot.round_chunks == s_.round_chunks_per_env;
  if (!all_done) return;
  for (Slot& slot : slots_) slot.round_chunks = 0;
  // The update of this round makes this version; its checkpoint needs this state. Every round's
  // is kept: a stop signal checkpoints whichever version the trainers reach. Generators start a
  // round only with its weights, so the trainers are at most a round behind: a state three
  // rounds old without a checkpoint of its version is no longer needed.
  const int64_t version = s_.start_version + ++round_;
  save_state(version);
  const int64_t old = version - 3;
  std::error_code ec;
  if (old > s_.start_version && !std::filesystem::exists(std::filesystem::path(o_.ckpt_dir) / checkpoint_file_name(old)))
    std::filesystem::remove(sim_state_path(o_.ckpt_dir, old, g_.index), ec);
}

// Requests: async modes serve every ready slot at once; sync waits for the whole rank.
bool SimulatorLoop::send_requests() {
  bool worked = false;
  const Clock::time_point now = Clock::now();
  auto ready = [&](const Slot& slot) {
    return !slot.awaiting && !slot.between_episodes && slot.ready_at <= now &&
           (!rounds_ || slot.round_chunks < s_.round_chunks_per_env);
  };
  if (o_.mode != RlMode::sync) {
    for (int e = 0; e < E_; ++e)
      if (ready(slots_[size_t(e)])) request(slots_[size_t(e)], e, slots_[size_t(e)].ready_at), worked = true;
    return worked;
  }
  bool all_ready = true;
  int idle = 0;
  Clock::time_point slowest = now - std::chrono::hours(1);
  for (const Slot& slot : slots_) {
    all_ready = all_ready && !slot.awaiting && slot.ready_at <= now, idle += !slot.awaiting;
    slowest = std::max(slowest, slot.ready_at);
  }
  if (all_ready && idle == E_) {
    for (int e = 0; e < E_; ++e)
      if (ready(slots_[size_t(e)])) request(slots_[size_t(e)], e, slowest), worked = true;
  } else if (idle == E_) {
    ++stragglers_waited_;
  }
  return worked;
}

nlohmann::json SimulatorLoop::run() {
  const Clock::time_point run_start = Clock::now();
  const std::string waiting_for =
      "a reply from generator rank " + std::to_string(generator_) + " or the stop from trainer 0";
  loop_.start(g_);
  for (;;) {
    const Clock::time_point turn_start = Clock::now();
    if (stop_.poll()) break;
    bool worked = receive_replies();
    end_round_when_done();
    worked = send_requests() | worked;
    worked = requests_.flush() | segments_.flush() | worked;
    to_generator_.progress(), to_trainer_.progress();
    loop_.end_turn(worked, turn_start, g_, waiting_for);
  }
  return summary(seconds(Clock::now() - run_start));
}

nlohmann::json SimulatorLoop::summary(double loop_s) {
  // With the model on, an environment is busy for its modelled chunks (its own core of a
  // cluster's simulator node); the rank's busy fraction is their share of E environments' time.
  if (cost_on_) loop_.clock().set(Utilisation{modelled_s_ / E_, std::max(0.0, loop_s - modelled_s_ / E_)});
  drain_and_finish(g_, {&from_generator_}, {&to_generator_, &to_trainer_}, o_.watchdog_s);
  return {{"role", "simulator"}, {"rank", g_.world_rank}, {"env_steps", env_steps_}, {"chunks", chunks_},
          {"episodes", episodes_}, {"successes", successes_}, {"modelled_sim_s", modelled_s_},
          {"pacer", {{"stages", chunks_}, {"overruns", late_chunks_}}},
          {"diverged_resets", diverged_resets_}, {"diverged_chunks", diverged_chunks_},
          {"lockstep_waits", stragglers_waited_}, {"time", loop_.clock().json()}};
}

}  // namespace

nlohmann::json run_simulator(const RlSetup& s) { return SimulatorLoop(s).run(); }

}  // namespace emb
