// The trainer's side of RL (CLOSED_LOOP.md "RL for a flow-matching action head"): transitions
// arrive in segments; GAE with the value head turns them into advantages; each micro-batch of
// transitions is one optimizer step of the decoupled PPO loss (rl/ppo.hpp) through the
// Flow-SDE log-probability of the chunk's stochastic denoising steps (rl/flow_sde.hpp), computed
// as the model's weighted flow regression (Model::accumulate_flow_regression); `micro_per_update`
// steps make one update (then rl.ppo_epochs − 1 more passes over its micro-batches), after
// which the policy version advances. π_prox is the policy at
// the start of the update. The same steps run whatever the mode: sync and async_rollout start
// an update once its transitions are all there, async streams micro-batches as they arrive,
// so on the same batch the modes give the same update (tests/rl/test_rl_learner.cpp).
// What an update computes depends only on the order transitions arrive in: a segment's GAE
// uses the value head as it was at the start of the update whose micro-batch first takes
// from it, advantages are normalised per micro-batch (the one statistic a stream can know),
// and staleness is judged when a transition is taken.
// With rl.advantage = grpo there is no GAE and no value head: segments are whole episodes,
// held until their group's rl.group_size episodes are all there, then queued with the group's
// advantages (rl/grpo.hpp), normalised again per micro-batch as GAE's are (train_on says why);
// a group whose returns are all equal is not queued (its advantages are 0: no signal, only work).
// Data-parallel trainers each hold their share of every micro-batch and sum gradients
// (MPI_Allreduce over `comm`); the loss is normalised by the global unfiltered count.
// The policy's parameters, gradients and moments live in the memory of the Ops it is given
// (kernels/make_ops.hpp: run.device); params() is their host copy, refreshed after each step.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "kernels/ops_buffer.hpp"
#include "model/model.hpp"
#include "rl/grpo.hpp"
#include "rl/ppo.hpp"
#include "rl/value_head.hpp"
#include "rl/roles/rl_messages.hpp"
#include "train/optimizer.hpp"
#include "parallel/shard_layout.hpp"

namespace emb {

struct LearnerConfig {
  int flow_steps = 4, exec_steps = 4, task_action_dim = 2, task_state_dim = 0;
  double noise_level = 0.5, gamma = 0.99, gae_lambda = 0.95, lr = 3e-5, value_lr = 1e-3;
  PpoConfig ppo;
  int micro_chunks = 64;       // this trainer's share of a micro-batch
  int micro_per_update = 4;
  int ppo_epochs = 1;          // passes over each update's micro-batches
  int value_steps = 1;         // value-head AdamW steps on each micro-batch (rl.value_steps)
  int max_staleness = 4;
  Advantage advantage = Advantage::gae;
  int group_size = 8;          // grpo: episodes per group
  // Updates before this version train the value head only: advantages from an untrained
  // critic would first pull the SFT policy anywhere (rl.critic_warmup).
  int64_t policy_from_version = 0;
};

struct LearnerStats {
  int64_t transitions = 0, env_steps = 0, dropped_stale = 0, filtered = 0, clipped = 0, used = 0;
  int64_t dropped_diverged = 0;  // transitions of diverged segments (rl_messages.hpp), taken but not trained on
  int64_t episodes = 0, successes = 0;
  int64_t uniform_groups = 0;  // grpo: groups not queued, their returns all equal
  double reward_sum = 0;  // of every transition received
  std::map<int64_t, int64_t> staleness;  // versions behind at training time → transitions
  double policy_loss = 0, value_loss = 0, mean_ratio = 0;  // of the last micro-batch
};

class RlLearner {
 public:
  RlLearner(const ModelConfig& cfg, const LearnerConfig& lc, std::vector<float> params, Ops& ops, MPI_Comm comm,
            uint64_t seed);

  // The segment's transitions wait for a micro-batch.
  void add(Segment segment);
  int64_t waiting() const { return waiting_; }
  // One micro-batch step (micro_chunks transitions, the oldest first); collective over comm.
  void step_micro();
  int64_t version() const { return version_; }
  int micro_in_update() const { return micro_; }
  const std::vector<float>& params() const { return params_; }
  ValueHead& value_head() { return value_; }
  const LearnerStats& stats() const { return stats_; }
  LearnerStats& stats() { return stats_; }
  const ParamRegistry& registry() const { return model_->params(); }
  const ShardLayout& layout() const { return layout_; }
  Optimizer& optimizer() { return *optimizer_; }
  // log π of each transition (its stochastic steps, executed elements) under params.
  std::vector<double> log_probs(const std::vector<const Transition*>& ts, const std::vector<float>& params);
  // Restores a checkpoint's version and AdamW step counts (value head: every micro-step;
  // policy: those after the critic warm-up).
  void restore(int64_t version, int64_t value_steps, int64_t policy_steps);
  int64_t value_steps() const { return opt_step_; }
  int64_t policy_steps() const { return policy_steps_; }

 private:
  struct Ready {
    Transition t;
    float advantage = 0, ret = 0;
  };
  struct Queued {
    Segment segment;
    std::vector<float> advantages, returns;  // filled by the first micro-batch that takes from it
    size_t next = 0;
  };
  void score(Queued& q);  // GAE with the update's value head
  void queue_group(std::vector<Segment>& group);  // grpo: a complete group's episodes, with their advantages
  // One optimizer step on a micro-batch (statistics counted on the first epoch only).
  void train_on(const std::vector<Ready>& micro, bool first_epoch);
  std::vector<Ready> take(int n);
  // One row of a packed batch: the j-th stochastic step of transitions[transition].
  struct StepRow {
    const Transition* t;
    size_t transition;
    int j;
  };
  static std::vector<StepRow> step_rows(const std::vector<const Transition*>& ts);
  float step_time(const StepRow& r) const;  // t = k/K of its step
  // Each row's observation with actions = the chain's x before its step.
  PackedBatch pack(const std::vector<StepRow>& rows);
  // log π of each of `transitions` (the sum over its rows) under params.
  std::vector<double> log_probs(const float* params, const PackedBatch& batch, const std::vector<StepRow>& rows,
                                size_t transitions);

  // Accumulates the policy's gradient of the micro-batch `batch` (its rows `steps`) into grads_,
  // each sample weighted by its PPO terms over the trainers' N unfiltered samples; the loss.
  double accumulate_policy_grads(PackedBatch& batch, const std::vector<StepRow>& steps,
                                 const std::vector<PpoSampleTerms>& terms, double N);
  // The value head regresses the micro-batch's GAE returns (value_steps AdamW steps); the
  // loss of the first. GRPO has no critic.
  double train_value_head(const std::vector<Ready>& micro);
  // The sum of the trainers' gradients (through host memory).
  void all_reduce_grads();

  ModelConfig cfg_;
  LearnerConfig lc_;
  MPI_Comm comm_;
  Ops& ops_;
  std::unique_ptr<Model> model_;
  ShardLayout layout_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<float> params_, host_grads_;  // host copies: the parameters pushed and saved, the gradients summed
  OpsBuffer<float> backend_params_, prox_params_, grads_;  // in the backend's memory
  ValueHead value_, value_at_update_;
  std::deque<Queued> queue_;
  std::map<int64_t, std::vector<Segment>> groups_;  // grpo: incomplete groups by episode key
  std::vector<std::vector<Ready>> update_;  // this update's micro-batches, for the further epochs
  int64_t waiting_ = 0;
  int64_t version_ = 0, opt_step_ = 0, policy_steps_ = 0;
  int micro_ = 0;
  LearnerStats stats_;
};

}  // namespace emb
