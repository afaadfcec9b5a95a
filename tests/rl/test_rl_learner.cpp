// RL's trainer step (rl/roles/rl_learner.hpp) on transitions the generator's own sampler
// made (policy_batch.hpp, one Flow-SDE step each) with the closed loop's gr00t model:
//   - mode equivalence: the whole round first (sync, async_rollout) or streamed micro-batch by
//     micro-batch (async) gives the same update, bit for bit
//   - direction: a step raises log π of the better-than-average transition and lowers the other's
//   - grpo: a group is queued once its episodes are all there, with its group-relative
//     advantages (a uniform group not at all), and a step favours the better episode
//   - version tagging: transitions older than rl.max_staleness are dropped, the rest counted in
//     the staleness histogram by how many versions behind they were
#define BOOST_TEST_MODULE rl_learner
#include <boost/test/unit_test.hpp>
#include <mpi.h>

#include "config/deck.hpp"
#include "core/rng.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "app/run_config_from_deck.hpp"
#include "model/presets.hpp"
#include "rl/flow_sde.hpp"
#include "rl/roles/policy_batch.hpp"
#include "rl/roles/rl_learner.hpp"

using namespace emb;

namespace {

struct MpiScope {
  MpiScope() { MPI_Init(nullptr, nullptr); }
  ~MpiScope() { MPI_Finalize(); }
};
BOOST_GLOBAL_FIXTURE(MpiScope);

constexpr int kStateDim = 22, kActionDim = 2, kK = 4, kExec = 4;

ModelConfig closed_loop_config() { return run_config_from_deck(load_deck("inputs/closed_loop_gr00t.in")).model; }

std::vector<float> initial_params(const ModelConfig& cfg) {
  CpuOps ops;
  auto model = make_model(cfg, &ops);
  std::vector<float> p(size_t(model->params().total()));
  model->init_params(p.data(), 3);
  return p;
}

LearnerConfig learner_config(int micro) {
  LearnerConfig lc;
  lc.flow_steps = kK, lc.exec_steps = kExec, lc.task_action_dim = kActionDim, lc.task_state_dim = kStateDim;
  lc.lr = 1e-3, lc.micro_chunks = micro, lc.micro_per_update = 2;
  return lc;
}

// n transitions in segments of `per_segment`, sampled by the behaviour policy `params` exactly
// as a generator does (random observations; rewards alternate +1 / −1 per transition; `one`:
// transition s's stochastic step is s mod K).
std::vector<Segment> sampled_segments(const ModelConfig& cfg, const std::vector<float>& params, int n,
                                      int per_segment, int64_t version, SdeSteps which = SdeSteps::one) {
  CpuOps ops;
  auto model = make_model(cfg, &ops);
  std::vector<Observation> obs(static_cast<size_t>(n));
  std::vector<PolicyObservation> views;
  for (int i = 0; i < n; ++i) {
    CounterRng r(17, RngStream::test, uint64_t(i), 0);
    obs[size_t(i)].embodiment = 1;
    for (int d = 0; d < kStateDim; ++d) obs[size_t(i)].state.push_back(float(r.normal(uint64_t(d))));
    for (int d = 0; d < 10 * cfg.d_ctx; ++d) obs[size_t(i)].vl.push_back(uint16_t(0x3800 + (i * 7 + d) % 512));  // float16 0.5..1
    views.push_back({1, &obs[size_t(i)].state, &obs[size_t(i)].vl});
  }
  PackedBatch batch = pack_policy_batch(cfg, views, "test");
  const size_t per = size_t(cfg.horizon) * cfg.action_dim;
  StochasticSteps sde;
  sde.resize(n, kK, per);
  for (int s = 0; s < n; ++s) {
    draw_stochastic_steps(sde, which, s, per, kK, CounterRng(23, RngStream::test, uint64_t(s), 0),
                          CounterRng(19, RngStream::test, uint64_t(s), 1));
    if (which == SdeSteps::one) sde.k_first[size_t(s)] = s % kK;
  }
  for (size_t e = 0; e < batch.actions.size(); ++e)
    batch.actions[e] = float(CounterRng(19, RngStream::test, e, 1).normal(0));
  integrate_flow(*model, params.data(), batch, kK, &sde);
  const std::vector<float> mask = executed_mask(cfg, kExec, kActionDim);
  std::vector<Segment> segments;
  for (int s = 0; s < n; ++s) {
    const size_t i = size_t(batch.sample_id[size_t(s)]);
    Transition t;
    t.obs = obs[i];
    t.version = version, t.k_first = sde.k_first[size_t(s)], t.k_count = sde.k_count[size_t(s)], t.steps = kExec;
    const auto chain = sde.chain.begin() + int64_t(size_t(s) * (kK + 1) * per);
    t.chain.assign(chain, chain + int64_t(size_t(t.k_count + 1) * per));
    t.logp_behav = chain_log_prob(t.k_first, t.k_count, kK, 0.5, t.chain.data(), &sde.velocity[size_t(s) * kK * per],
                                  mask.data(), int64_t(per));
    t.reward = (i % 2 == 0) ? 1.f : -1.f;
    t.done = 1;
    if (i % size_t(per_segment) == 0) segments.push_back({int32_t(i), {}, std::vector<float>(kStateDim, 0.f)});
    segments.back().transitions.push_back(std::move(t));
  }
  return segments;
}

}  // namespace

BOOST_AUTO_TEST_CASE(whole_round_and_stream_give_the_same_update) {
  const ModelConfig cfg = closed_loop_config();
  const std::vector<float> p0 = initial_params(cfg);
  for (SdeSteps which : {SdeSteps::one, SdeSteps::all}) {
    for (int epochs : {1, 2}) {
      const std::vector<Segment> segments = sampled_segments(cfg, p0, 32, 3, 0, which);  // 2 updates of 2 × 8
      LearnerConfig lc = learner_config(8);
      lc.ppo_epochs = epochs;
      CpuOps whole_ops, stream_ops;
      RlLearner whole(cfg, lc, p0, whole_ops, MPI_COMM_NULL, 5), stream(cfg, lc, p0, stream_ops, MPI_COMM_NULL, 5);
      for (const Segment& s : segments) whole.add(s);
      while (whole.waiting() >= 8) whole.step_micro();
      for (const Segment& s : segments) {  // the async trainer: a micro-step as soon as one is there
        stream.add(s);
        while (stream.waiting() >= 8) stream.step_micro();
      }
      BOOST_TEST(whole.version() == 2);
      BOOST_TEST(stream.version() == 2);
      BOOST_TEST(whole.stats().used == 32);
      BOOST_TEST(whole.policy_steps() == 4 * epochs);
      size_t differ = 0, moved = 0;
      for (size_t i = 0; i < p0.size(); ++i)
        differ += whole.params()[i] != stream.params()[i], moved += whole.params()[i] != p0[i];
      BOOST_TEST(differ == 0u, (which == SdeSteps::one ? "one" : "all") << ", " << epochs << " epochs: " << differ
                                                                   << " parameters differ");
      BOOST_TEST(moved > p0.size() / 2);
      BOOST_TEST(whole.value_head().params() == stream.value_head().params());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_step_raises_log_prob_of_the_better_transition) {
  const ModelConfig cfg = closed_loop_config();
  const std::vector<float> p0 = initial_params(cfg);
  for (SdeSteps which : {SdeSteps::one, SdeSteps::all}) {
    const std::vector<Segment> segments = sampled_segments(cfg, p0, 8, 1, 0, which);
    LearnerConfig lc = learner_config(8);
    lc.micro_per_update = 1;
    CpuOps ops;
    RlLearner learner(cfg, lc, p0, ops, MPI_COMM_NULL, 5);
    for (const Segment& s : segments) learner.add(s);
    learner.step_micro();
    std::vector<const Transition*> ts;
    for (const Segment& s : segments) ts.push_back(&s.transitions[0]);
    const std::vector<double> before = learner.log_probs(ts, p0), after = learner.log_probs(ts, learner.params());
    double better = 0, worse = 0;  // mean change of log π of the +1 and of the −1 transitions
    for (size_t i = 0; i < ts.size(); ++i) {
      BOOST_TEST(before[i] == ts[i]->logp_behav, boost::test_tools::tolerance(1e-4));  // the sampler's own log π
      (ts[i]->reward > 0 ? better : worse) += (after[i] - before[i]) / 4.0;
    }
    const char* kind = which == SdeSteps::one ? "one" : "all";
    // The step ascends Σ A·log π (A = ±1 after normalising): to first order the rewarded
    // transitions' log π gains on the punished ones' (both may rise: they share parameters).
    BOOST_TEST(better > 0.0, kind << ": mean Δ log π of rewarded transitions " << better);
    BOOST_TEST(better - worse > 0.0, kind << ": rewarded " << better << " vs punished " << worse);
    BOOST_TEST(learner.stats().used == 8);
    BOOST_TEST(learner.version() == 1);
  }
}

BOOST_AUTO_TEST_CASE(stale_transitions_are_dropped_and_the_rest_counted_by_age) {
  const ModelConfig cfg = closed_loop_config();
  const std::vector<float> p0 = initial_params(cfg);
  LearnerConfig lc = learner_config(8);
  lc.max_staleness = 4, lc.micro_per_update = 1;
  CpuOps ops;
  RlLearner learner(cfg, lc, p0, ops, MPI_COMM_NULL, 5);
  learner.restore(10, 0, 0);
  for (const Segment& s : sampled_segments(cfg, p0, 4, 4, 5)) learner.add(s);  // 5 behind: dropped
  for (const Segment& s : sampled_segments(cfg, p0, 8, 4, 7)) learner.add(s);  // 3 behind: trained
  BOOST_TEST(learner.waiting() == 12);
  learner.step_micro();
  BOOST_TEST(learner.stats().dropped_stale == 4);
  BOOST_TEST(learner.stats().used + learner.stats().filtered == 8);
  BOOST_TEST(learner.stats().staleness.at(3) == 8);
  BOOST_TEST(learner.version() == 11);
}

BOOST_AUTO_TEST_CASE(grpo_queues_complete_groups_and_favours_the_better_episode) {
  const ModelConfig cfg = closed_loop_config();
  const std::vector<float> p0 = initial_params(cfg);
  // Four episodes of 2 transitions: group 7 = episodes 0 (return 1) and 1 (return 0), so
  // A = +1, −1; group 9 = episodes 2 and 3, both return 0: uniform.
  std::vector<Segment> episodes = sampled_segments(cfg, p0, 8, 2, 0);
  const float rewards[8] = {0, 1, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < episodes.size(); ++i) {
    episodes[i].episode = i < 2 ? 7 : 9;
    for (size_t j = 0; j < 2; ++j) episodes[i].transitions[j].reward = rewards[2 * i + j];
    episodes[i].transitions[0].done = 0;  // the fixture ends an episode at every transition
  }
  LearnerConfig lc = learner_config(4);
  lc.advantage = Advantage::grpo, lc.group_size = 2, lc.micro_per_update = 1;
  CpuOps ops;
  RlLearner learner(cfg, lc, p0, ops, MPI_COMM_NULL, 5);
  learner.add(episodes[0]);
  learner.add(episodes[2]);
  BOOST_TEST(learner.waiting() == 0);  // no group is complete
  learner.add(episodes[1]);
  BOOST_TEST(learner.waiting() == 4);  // group 7
  learner.add(episodes[3]);
  BOOST_TEST(learner.waiting() == 4);  // group 9 carries no signal
  BOOST_TEST(learner.stats().uniform_groups == 1);
  BOOST_TEST(learner.stats().episodes == 4);
  const std::vector<float> value_before = learner.value_head().params();
  learner.step_micro();
  BOOST_TEST(learner.version() == 1);
  BOOST_TEST(learner.stats().used == 4);
  BOOST_TEST(learner.value_head().params() == value_before);  // no critic
  std::vector<const Transition*> ts;
  for (size_t i = 0; i < 2; ++i)
    for (const Transition& t : episodes[i].transitions) ts.push_back(&t);
  const std::vector<double> before = learner.log_probs(ts, p0), after = learner.log_probs(ts, learner.params());
  const double better = (after[0] - before[0] + after[1] - before[1]) / 2;
  const double worse = (after[2] - before[2] + after[3] - before[3]) / 2;
  BOOST_TEST(better - worse > 0.0, "the better episode's mean Δ log π " << better << " vs the other's " << worse);
}

BOOST_AUTO_TEST_CASE(grpo_refuses_a_segment_that_does_not_end_its_episode) {
  const ModelConfig cfg = closed_loop_config();
  const std::vector<float> p0 = initial_params(cfg);
  std::vector<Segment> segments = sampled_segments(cfg, p0, 2, 2, 0);
  segments[0].transitions.back().done = 0;
  LearnerConfig lc = learner_config(2);
  lc.advantage = Advantage::grpo, lc.group_size = 2;
  CpuOps ops;
  RlLearner learner(cfg, lc, p0, ops, MPI_COMM_NULL, 5);
  BOOST_CHECK_THROW(learner.add(segments[0]), std::exception);
}
