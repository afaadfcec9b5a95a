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
#include "rl/roles/rl_checkpoint.hpp"
#include "rl/roles/rl_learner.hpp"
#include "rl/roles/rl_messages.hpp"
#include "rl/roles/rl_roles.hpp"
#include "rl/roles/rl_shutdown.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

// Every trainer must take a micro-step together (gradients are summed): they agree on the
// smallest number of steps any of them can take now.
int64_t agreed_micro_steps(int64_t mine, MPI_Comm comm) {
  return min_over_ranks(comm, mine);
}

// The learner's settings from the deck's rl options, the share of this trainer of T.
LearnerConfig learner_config(const RlSetup& s, int T) {
  const RlOptions& o = s.o;
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
  return lc;
}

// The run's totals over every trainer's simulators at an update (the trainers step together,
// so these collectives are matched).
struct UpdateTotals {
  int64_t env_steps = 0, episodes = 0, successes = 0, filtered = 0, dropped_stale = 0, transitions = 0,
          uniform_groups = 0;
  double reward = 0;
};

UpdateTotals update_totals(const LearnerStats& st, MPI_Comm trainers) {
  int64_t totals[7] = {st.env_steps,     st.episodes,    st.successes,     st.filtered,
                       st.dropped_stale, st.transitions, st.uniform_groups};
  sum_over_ranks(trainers, totals, 7);
  double reward = st.reward_sum;
  sum_over_ranks(trainers, &reward, 1);
  return {totals[0], totals[1], totals[2], totals[3], totals[4], totals[5], totals[6], reward};
}

// The trainer rank's loop: segments in, micro-batch steps, weights out.
class TrainerLoop {
 public:
  explicit TrainerLoop(const RlSetup& s);
  // Turns until the last update; then this rank's statistics.
  nlohmann::json run();

 private:
  bool receive_segments();
  void step();
  void report_update(const UpdateTotals& t);
  nlohmann::json summary();

  const RlSetup& s_;
  const RlOptions& o_;
  const RlGroups& g_;
  const int T_;  // trainers
  std::vector<std::unique_ptr<ChannelReceiver>> from_sim_;
  const LearnerConfig lc_;
  const std::unique_ptr<Ops> ops_;
  RlLearner learner_;
  std::unique_ptr<WeightPublisher> publisher_;
  StopSignal stop_;
  StagePacer pacer_;
  RoleLoop loop_;
  Clock::time_point start_;  // of the loop
  const int64_t round_share_;
  nlohmann::json curve_ = nlohmann::json::array();
  UpdateTotals last_;  // at the previous update
  std::string last_ckpt_;
};

TrainerLoop::TrainerLoop(const RlSetup& s)
    : s_(s),
      o_(s.o),
      g_(s.groups),
      T_(int(g_.trainers.size())),
      lc_(learner_config(s, T_)),
      ops_(make_ops(o_.backend, s.local_rank)),
      learner_(s.cfg, lc_, s.init_params, *ops_, g_.role_comm, o_.seed),
      stop_(g_),
      pacer_(s.cost.on()),
      loop_(o_.watchdog_s),
      round_share_(int64_t(o_.update_chunks) / T_) {
  for (size_t sim = 0; sim < g_.simulators.size(); ++sim)
    if (int(sim) % T_ == g_.index)
      from_sim_.push_back(std::make_unique<ChannelReceiver>(MPI_COMM_WORLD, g_.simulators[sim], kTagSegment));
  learner_.restore(s.start_version, s.start_value_steps, s.start_policy_steps);
  if (!s.value_state.empty()) restore_value_head(learner_.value_head(), s.value_state);
  if (!s.exp_avg.empty()) {
    std::vector<float> m = s.exp_avg, v = s.exp_avg_sq;
    learner_.optimizer().upload_state(OptimizerState{m.data(), v.data()});
  }
  if (g_.index == 0) publisher_ = std::make_unique<WeightPublisher>(MPI_COMM_WORLD, g_.generators, kTagWeights);
  start_ = Clock::now();
}

bool TrainerLoop::receive_segments() {
  bool worked = false;
  std::vector<uint8_t> bytes;
  for (auto& r : from_sim_)
    while (r->try_recv(bytes)) {
      Segment seg;
      decode(bytes, seg);
      learner_.add(seg);
      worked = true;
    }
  return worked;
}

// Trainer 0 after an update: the weights to the generators, a progress line, the curve's point.
void TrainerLoop::report_update(const UpdateTotals& t) {
  const LearnerStats& st = learner_.stats();
  publisher_->publish(learner_.params().data(), int64_t(learner_.params().size()), learner_.version());
  const int64_t eps = t.episodes - last_.episodes, wins = t.successes - last_.successes;
  const double reward_per_chunk =
      (t.reward - last_.reward) / double(std::max<int64_t>(1, t.transitions - last_.transitions));
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const int64_t done = learner_.version() - s_.start_version;
  const double eta = elapsed / double(done) * double(o_.updates - done);
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
  if (g_.index == 0) report_update(totals);
  last_ = totals;
  const bool last = learner_.version() == s_.start_version + o_.updates;
  if (g_.index == 0 && (last || (o_.ckpt_every > 0 && learner_.version() % o_.ckpt_every == 0)))
    last_ckpt_ = save_rl_checkpoint(s_, learner_);
}

nlohmann::json TrainerLoop::run() {
  while (learner_.version() < s_.start_version + o_.updates) {
    const Clock::time_point turn_start = Clock::now();
    bool worked = receive_segments();
    // async streams micro-batches; rounds wait for the whole round's share.
    const bool can_start =
        o_.mode == RlMode::async || learner_.micro_in_update() > 0 || learner_.waiting() >= round_share_;
    const int64_t possible = can_start ? learner_.waiting() / lc_.micro_chunks : 0;
    if (agreed_micro_steps(possible, g_.role_comm) > 0) step(), worked = true;
    if (publisher_) publisher_->progress();
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
          {"clipped", st.clipped}, {"dropped_stale", st.dropped_stale}, {"staleness", staleness},
          {"uniform_groups", st.uniform_groups},
          {"episodes", st.episodes}, {"successes", st.successes}, {"curve", curve_}, {"checkpoint", last_ckpt_},
          {"time", loop_.clock().json()}, {"pacer", pacer_json(pacer_)}};
}

}  // namespace

nlohmann::json run_trainer(const RlSetup& s) { return TrainerLoop(s).run(); }

}  // namespace emb
