// The trainer role (rl_roles.hpp): segments from its simulators into RlLearner, micro-batch
// steps (async: as soon as one is there; rounds: once the round is complete), weights pushed
// to the generators after every update, progress lines, checkpoints and the stop signal. A
// stop request (core/stop_request.hpp) is agreed by the trainers at each update: that update
// is checkpointed and the run ends as at its last one.
// Rounds (sync, async_rollout) hand a round's segments to the learner in environment order,
// whatever order they arrived in: every chunk of a round is fixed by its keys and the round's
// weights, so these modes give the same updates run after run (and after train.resume).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "kernels/make_ops.hpp"
#include "rl/backoff.hpp"
#include "rl/channel.hpp"
#include "rl/stage_pacer.hpp"
#include "rl/weight_push.hpp"
#include "rl/roles/rl_checkpoint.hpp"
#include "rl/roles/rl_learner.hpp"
#include "rl/roles/rl_messages.hpp"
#include "rl/roles/rl_roles.hpp"
#include "rl/roles/rl_shutdown.hpp"
#include "rl/roles/update_totals.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

// Every trainer must take a micro-step together (gradients are summed): they agree on the
// smallest number of steps any of them can take now.
int64_t agreed_micro_steps(int64_t mine, MPI_Comm comm) {
  return min_over_ranks(comm, mine);
}

// The world ranks of the simulators feeding trainer g.index (simulator i feeds trainer i % T).
std::vector<int> simulators_of_trainer(const RlGroups& g) {
  std::vector<int> ranks;
  for (size_t sim = 0; sim < g.simulators.size(); ++sim)
    if (int(sim) % int(g.trainers.size()) == g.index) ranks.push_back(g.simulators[sim]);
  return ranks;
}

// The learner's settings from the deck's rl options, the share of this trainer of T.
LearnerConfig learner_config(const RlSetup& s, int T) {
  const RlOptions& o = s.o;
  LearnerConfig lc;
  lc.flow_steps = s.flow_steps, lc.exec_steps = s.exec_steps;
  lc.task_action_dim = s.task.action_dim;
  lc.task_state_dim = s.normalization.state_width(s.task.embodiment, s.task.state_dim);  // the value head sees the policy's states
  lc.noise_level = o.noise_level, lc.gamma = o.gamma, lc.gae_lambda = o.gae_lambda, lc.lr = o.lr;
  lc.value_lr = o.value_lr, lc.ppo = o.ppo, lc.max_staleness = o.max_staleness;
  lc.micro_chunks = o.micro_chunks / T, lc.micro_per_update = o.update_chunks / o.micro_chunks;
  // Versions count from the SFT start: a resumed run is past the warm-up. GRPO has no critic to warm up.
  lc.policy_from_version = o.advantage == Advantage::grpo ? 0 : o.critic_warmup;
  lc.ppo_epochs = o.ppo_epochs, lc.value_steps = o.value_steps;
  lc.advantage = o.advantage, lc.group_size = o.group_size;
  return lc;
}

// The trainer rank's loop: segments in, micro-batch steps, weights out.
class TrainerLoop {
 public:
  explicit TrainerLoop(const RlSetup& s);
  // Turns until the last update; then this rank's statistics.
  nlohmann::json run();

 private:
  bool receive_segments();
  void learn_from(Segment seg);
  void step();
  void report_update(const UpdateTotals& t);
  nlohmann::json summary();

  const RlSetup& s_;
  const RlOptions& o_;
  const RlGroups& g_;
  const int T_;  // trainers
  std::vector<std::unique_ptr<ChannelReceiver>> from_sim_;
  PeerSilence sim_silence_;  // async: each of from_sim_'s simulators
  const LearnerConfig lc_;
  const std::unique_ptr<Ops> ops_;
  RlLearner learner_;
  std::unique_ptr<WeightPublisher> publisher_;
  StopSignal stop_;
  StagePacer pacer_;
  RoleLoop loop_;
  Clock::time_point start_;  // of the loop
  const int64_t round_share_;
  const int64_t end_version_;  // of the run
  std::vector<Segment> round_;  // rounds: this round's segments so far
  int64_t round_transitions_ = 0;
  nlohmann::json curve_ = nlohmann::json::array();
  UpdateTotals last_;  // at the previous update
  std::string last_ckpt_;
  bool stopping_ = false;  // the trainers agreed on a stop signal at the last update
};

TrainerLoop::TrainerLoop(const RlSetup& s)
    : s_(s),
      o_(s.o),
      g_(s.groups),
      T_(int(g_.trainers.size())),
      sim_silence_(simulators_of_trainer(g_), o_.watchdog_s, o_.mode == RlMode::async),
      lc_(learner_config(s, T_)),
      ops_(make_ops(o_.backend, s.local_rank)),
      learner_(s.cfg, lc_, s.init_params, *ops_, g_.role_comm, o_.seed),
      stop_(g_),
      pacer_(s.cost.on()),
      loop_(o_.watchdog_s),
      round_share_(int64_t(o_.update_chunks) / T_),
      end_version_(s.run_start_version + o_.updates),
      last_(s.start_totals) {
  for (int sim : simulators_of_trainer(g_))
    from_sim_.push_back(std::make_unique<ChannelReceiver>(MPI_COMM_WORLD, sim, kTagSegment));
  learner_.restore(s.start_version, s.start_value_steps, s.start_policy_steps);
  if (g_.index == 0) add_totals(learner_.stats(), s.start_totals);  // the sum over trainers is the run's
  if (!s.value_state.empty()) restore_value_head(learner_.value_head(), s.value_state);
  if (!s.exp_avg.empty()) {
    std::vector<float> m = s.exp_avg, v = s.exp_avg_sq;
    learner_.optimizer().upload_state(OptimizerState{m.data(), v.data()});
  }
  if (g_.index == 0) publisher_ = std::make_unique<WeightPublisher>(MPI_COMM_WORLD, g_.generators, kTagWeights);
  if (g_.index == 0 && !s.resume_dir.empty()) {
    const std::string resumed = rl_state_digest(learner_, s.start_totals);
    EMB_CHECK(s.saved_state.empty() || resumed == s.saved_state, s.resume_sidecar,
              ": the restored state differs from the saved one (restored '", resumed, "', saved '", s.saved_state,
              "'); the checkpoint or its sidecar is not the pair this run wrote");
    std::printf("rl resumed: state: %s\n", resumed.c_str());
    std::fflush(stdout);
  }
  start_ = Clock::now();
}

bool TrainerLoop::receive_segments() {
  bool worked = false;
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < from_sim_.size(); ++i)
    while (from_sim_[i]->try_recv(bytes)) {
      sim_silence_.heard(i);
      Segment seg;
      decode(bytes, seg);
      learn_from(std::move(seg));
      worked = true;
    }
  return worked;
}

void TrainerLoop::learn_from(Segment seg) {
  if (o_.mode == RlMode::async) return learner_.add(std::move(seg));
  round_transitions_ += int64_t(seg.transitions.size());
  round_.push_back(std::move(seg));
  if (round_transitions_ < round_share_) return;
  std::stable_sort(round_.begin(), round_.end(), [](const Segment& a, const Segment& b) { return a.env < b.env; });
  for (Segment& r : round_) learner_.add(std::move(r));
  round_.clear(), round_transitions_ = 0;
}

// Trainer 0 after an update: the weights to the generators, a progress line, the curve's point.
void TrainerLoop::report_update(const UpdateTotals& t) {
  const LearnerStats& st = learner_.stats();
  publisher_->publish(learner_.params().data(), int64_t(learner_.params().size()), learner_.version());
  const int64_t eps = t.episodes - last_.episodes, wins = t.successes - last_.successes;
  const double reward_per_chunk =
      (t.reward - last_.reward) / double(std::max<int64_t>(1, t.transitions - last_.transitions));
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const int64_t done = learner_.version() - s_.run_start_version;
  const double eta = elapsed / double(learner_.version() - s_.start_version) * double(end_version_ - learner_.version());
  std::printf("rl update %3lld/%d | env steps %lld | %.1f env steps/s | episodes %lld success %.2f | "
              "reward/chunk %.3f | policy loss %.4f value loss %.4f | filtered %lld stale dropped %lld | "
              "ETA %02d:%02d",
              (long long)done, o_.updates, (long long)t.env_steps, double(t.env_steps) / elapsed, (long long)eps,
              eps ? double(wins) / double(eps) : 0.0, reward_per_chunk, st.policy_loss, st.value_loss,
              (long long)t.filtered, (long long)t.dropped_stale, int(eta) / 60, int(eta) % 60);
  if (o_.advantage == Advantage::grpo) std::printf(" | uniform groups %lld", (long long)t.uniform_groups);
  std::printf("\n");
  std::fflush(stdout);
  curve_.push_back({{"version", learner_.version()}, {"env_steps", t.env_steps}, {"seconds", elapsed},
                    {"episodes", eps}, {"successes", wins}, {"reward_per_chunk", reward_per_chunk}});
}

// One micro-batch step of every trainer; after an update, its report and checkpoint.
void TrainerLoop::step() {
  pacer_.begin();
  const int64_t before = learner_.version();
  learner_.step_micro();
  pacer_.finish(s_.cost.train_seconds(o_.micro_chunks / T_));
  if (learner_.version() == before) return;
  const UpdateTotals totals = update_totals(learner_.stats(), g_.role_comm);
  stopping_ = max_over_ranks(g_.role_comm, int64_t(stop_requested())) != 0;  // core/stop_request.hpp
  if (g_.index == 0) report_update(totals);
  last_ = totals;
  if (g_.index == 0 && (stopping_ || is_checkpoint_version(o_, end_version_, learner_.version())))
    last_ckpt_ = save_rl_checkpoint(s_, learner_, totals);
  if (g_.index == 0 && stopping_ && learner_.version() < end_version_)
    std::printf("rl: received a stop signal: stopping after version %lld (%s); train.resume = auto continues\n",
                (long long)learner_.version(), last_ckpt_.c_str());
}

nlohmann::json TrainerLoop::run() {
  loop_.start(g_);
  sim_silence_.restart();
  while (learner_.version() < end_version_ && !stopping_) {
    const Clock::time_point turn_start = Clock::now();
    bool worked = receive_segments();
    // async streams micro-batches; rounds wait for the whole round's share.
    const bool can_start =
        o_.mode == RlMode::async || learner_.micro_in_update() > 0 || learner_.waiting() >= round_share_;
    const int64_t possible = can_start ? learner_.waiting() / lc_.micro_chunks : 0;
    if (agreed_micro_steps(possible, g_.role_comm) > 0) step(), worked = true;
    if (publisher_) publisher_->progress();
    sim_silence_.check(g_, "segments");
    loop_.end_turn(worked, turn_start, g_, "segments from its simulators");
  }
  if (g_.index == 0) stop_.send_to_all();
  return summary();
}

nlohmann::json TrainerLoop::summary() {
  std::vector<ChannelReceiver*> receivers;
  for (auto& r : from_sim_) receivers.push_back(r.get());
  drain_and_finish(g_, receivers, {}, o_.watchdog_s, publisher_.get());
  const LearnerStats& st = learner_.stats();
  nlohmann::json staleness = nlohmann::json::object();
  for (auto& [k, n] : st.staleness) staleness[std::to_string(k)] = n;
  return {{"role", "trainer"}, {"rank", g_.world_rank}, {"version", learner_.version()},
          {"transitions", st.transitions}, {"env_steps", st.env_steps}, {"used", st.used}, {"filtered", st.filtered},
          {"clipped", st.clipped}, {"dropped_stale", st.dropped_stale},
          {"dropped_diverged", st.dropped_diverged}, {"staleness", staleness},
          {"uniform_groups", st.uniform_groups},
          {"episodes", st.episodes}, {"successes", st.successes}, {"curve", curve_}, {"checkpoint", last_ckpt_},
          {"time", loop_.clock().json()}, {"pacer", pacer_json(pacer_)}};
}

}  // namespace

nlohmann::json run_trainer(const RlSetup& s) { return TrainerLoop(s).run(); }

}  // namespace emb
