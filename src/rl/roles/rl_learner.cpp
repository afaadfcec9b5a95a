#include "rl/roles/rl_learner.hpp"

#include <algorithm>
#include <cmath>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "rl/roles/policy_batch.hpp"
#include "rl/flow_sde.hpp"

namespace emb {

namespace {

constexpr float kGradClip = 1.0f;

void allreduce_sum(std::vector<float>& v, MPI_Comm comm) {
  if (comm != MPI_COMM_NULL) sum_over_ranks(comm, v.data(), int64_t(v.size()));
}

size_t bytes_of(const std::vector<float>& v) { return v.size() * sizeof(float); }

}  // namespace

RlLearner::RlLearner(const ModelConfig& cfg, const LearnerConfig& lc, std::vector<float> params, Ops& ops,
                     MPI_Comm comm, uint64_t seed)
    : cfg_(cfg),
      lc_(lc),
      comm_(comm),
      ops_(ops),
      model_(make_model(cfg, &ops_)),
      layout_(model_->params(), ShardMode::none, 0, 1),
      params_(std::move(params)),
      value_(lc.task_state_dim, {64, 64}, seed),
      value_at_update_(value_) {
  EMB_CHECK(int64_t(params_.size()) == model_->params().total(), "rl: the policy has ", params_.size(),
            " parameters, the model ", model_->params().total());
  AdamWConfig adam;
  adam.lr = float(lc.lr), adam.beta1 = 0.9f, adam.beta2 = 0.95f, adam.weight_decay = 0.0f;
  optimizer_ = std::make_unique<Optimizer>(layout_, ops_, adam, kGradClip);
  const int64_t n = int64_t(params_.size());
  backend_params_ = OpsBuffer<float>(ops_, n), prox_params_ = OpsBuffer<float>(ops_, n);
  grads_ = OpsBuffer<float>(ops_, n);
  host_grads_.resize(params_.size());
  ops_.upload(backend_params_.data(), params_.data(), bytes_of(params_));
}

void RlLearner::all_reduce_grads() {
  if (comm_ == MPI_COMM_NULL) return;
  ops_.download(host_grads_.data(), grads_.data(), bytes_of(host_grads_));
  allreduce_sum(host_grads_, comm_);
  ops_.upload(grads_.data(), host_grads_.data(), bytes_of(host_grads_));
}

void RlLearner::restore(int64_t version, int64_t value_steps, int64_t policy_steps) {
  version_ = version, opt_step_ = value_steps, policy_steps_ = policy_steps;
}

void RlLearner::add(Segment segment) {
  for (const Transition& t : segment.transitions) {
    stats_.env_steps += t.steps, ++stats_.transitions;
    if (segment.diverged) continue;  // its chunks count as work done, not as rewards or episodes
    stats_.reward_sum += t.reward;
    if (t.done) ++stats_.episodes, stats_.successes += t.success;
  }
  if (lc_.advantage == Advantage::grpo) {
    EMB_CHECK(!segment.transitions.empty() && segment.transitions.back().done, "rl.advantage = grpo: environment ",
              segment.env, " sent a segment that does not end its episode");
    const int64_t key = segment.episode;
    std::vector<Segment>& group = groups_[key];
    group.push_back(std::move(segment));
    if (int(group.size()) == lc_.group_size) {
      queue_group(group);
      groups_.erase(key);
    }
    return;
  }
  waiting_ += int64_t(segment.transitions.size());
  if (!segment.transitions.empty()) queue_.push_back({std::move(segment), {}, {}, 0});
}

void RlLearner::queue_group(std::vector<Segment>& group) {
  std::vector<double> returns;
  for (const Segment& episode : group) {
    double sum = 0;
    for (const Transition& t : episode.transitions) sum += t.reward;
    returns.push_back(sum);
  }
  const std::vector<float> advantages = group_advantages(returns);
  if (std::all_of(advantages.begin(), advantages.end(), [](float a) { return a == 0.f; })) {
    ++stats_.uniform_groups;
    return;
  }
  for (size_t i = 0; i < group.size(); ++i) {
    const size_t T = group[i].transitions.size();
    waiting_ += int64_t(T);
    queue_.push_back({std::move(group[i]), std::vector<float>(T, advantages[i]),
                      std::vector<float>(T, float(returns[i])), 0});
  }
}

void RlLearner::score(Queued& q) {
  const Segment& seg = q.segment;
  const size_t T = seg.transitions.size();
  std::vector<float> states, values(T + 1), rewards;
  std::vector<uint8_t> dones;
  for (const Transition& t : seg.transitions) {
    states.insert(states.end(), t.obs.state.begin(), t.obs.state.end());
    rewards.push_back(t.reward), dones.push_back(t.done);
  }
  states.insert(states.end(), seg.next_state.begin(), seg.next_state.end());
  value_at_update_.forward(states.data(), int(T + 1), values.data());
  const std::vector<float> v(values.begin(), values.begin() + int64_t(T));
  gae(rewards, dones, v, values[T], lc_.gamma, lc_.gae_lambda, q.advantages, q.returns);
}

std::vector<RlLearner::Ready> RlLearner::take(int n) {
  std::vector<Ready> out;
  // A diverged transition holds its place in the micro-batch (its round's micro-batches are
  // counted out of the round's transitions) but is never trained on, not even scored.
  int diverged = 0;
  while (int(out.size()) + diverged < n && !queue_.empty()) {
    Queued& q = queue_.front();
    const Transition& t = q.segment.transitions[q.next];
    if (q.segment.diverged) {
      ++diverged, ++stats_.dropped_diverged;
    } else {
      if (q.advantages.empty()) score(q);
      if (version_ - t.version > lc_.max_staleness)
        ++stats_.dropped_stale;
      else
        out.push_back({t, q.advantages[q.next], q.returns[q.next]});
    }
    --waiting_;
    if (++q.next == q.segment.transitions.size()) queue_.pop_front();
  }
  return out;
}

std::vector<RlLearner::StepRow> RlLearner::step_rows(const std::vector<const Transition*>& ts) {
  std::vector<StepRow> rows;
  for (size_t i = 0; i < ts.size(); ++i)
    for (int j = 0; j < ts[i]->k_count; ++j) rows.push_back({ts[i], i, j});
  return rows;
}

PackedBatch RlLearner::pack(const std::vector<StepRow>& rows) {
  std::vector<PolicyObservation> obs;
  for (const StepRow& r : rows) obs.push_back({r.t->obs.embodiment, &r.t->obs.state, &r.t->obs.vl});
  PackedBatch batch = pack_policy_batch(cfg_, obs, "rl micro-batch");
  const size_t per = size_t(cfg_.horizon) * cfg_.action_dim;
  for (int s = 0; s < batch.n_samples; ++s) {
    const StepRow& r = rows[size_t(batch.sample_id[size_t(s)])];
    const auto before = r.t->chain.begin() + int64_t(size_t(r.j) * per);
    std::copy(before, before + int64_t(per), batch.actions.begin() + int64_t(s * per));
  }
  return batch;
}

float RlLearner::step_time(const StepRow& r) const { return float(r.t->k_first + r.j) / float(lc_.flow_steps); }

std::vector<double> RlLearner::log_probs(const float* params, const PackedBatch& batch,
                                         const std::vector<StepRow>& rows, size_t transitions) {
  const int B = batch.n_samples;
  const size_t per = size_t(cfg_.horizon) * cfg_.action_dim;
  std::vector<float> tau(static_cast<size_t>(B));
  for (int s = 0; s < B; ++s) tau[size_t(s)] = step_time(rows[size_t(batch.sample_id[size_t(s)])]);
  std::vector<float> velocity;
  model_->flow_velocity(params, batch, tau, velocity);
  const std::vector<float> mask = executed_mask(cfg_, lc_.exec_steps, lc_.task_action_dim);
  std::vector<double> logp(transitions, 0.0);
  for (int s = 0; s < B; ++s) {
    const StepRow& r = rows[size_t(batch.sample_id[size_t(s)])];
    const FlowTransition tr = flow_sde_transition(r.t->k_first + r.j, lc_.flow_steps, lc_.noise_level);
    const float* before = &r.t->chain[size_t(r.j) * per];
    logp[r.transition] += transition_log_prob(tr, before, &velocity[s * per], before + per, mask.data(), int64_t(per));
  }
  return logp;
}

std::vector<double> RlLearner::log_probs(const std::vector<const Transition*>& ts, const std::vector<float>& params) {
  if (ts.empty()) return {};
  const std::vector<StepRow> rows = step_rows(ts);
  OpsBuffer<float> backend(ops_, int64_t(params.size()));
  ops_.upload(backend.data(), params.data(), bytes_of(params));
  return log_probs(backend.data(), pack(rows), rows, ts.size());
}

void RlLearner::step_micro() {
  if (micro_ == 0) ops_.copy(backend_params_.view(), prox_params_.view()), value_at_update_ = value_, update_.clear();
  update_.push_back(take(lc_.micro_chunks));
  train_on(update_.back(), true);
  if (++micro_ < lc_.micro_per_update) return;
  // PPO's further epochs over the update's micro-batches, in the order they came (the clip
  // against π_prox keeps the policy near the one that made the samples).
  for (int epoch = 1; epoch < lc_.ppo_epochs; ++epoch)
    for (const std::vector<Ready>& micro : update_) train_on(micro, false);
  micro_ = 0, ++version_;
}

double RlLearner::accumulate_policy_grads(PackedBatch& batch, const std::vector<StepRow>& steps,
                                          const std::vector<PpoSampleTerms>& terms, double N) {
  // dL/dv = g·d log π/dv = −g·curvature·(v − v*): the regression towards v* with weight
  // −g·curvature/2 per executed element (denominator 1), from a = x + (1 − τ)v*, ε = x − τ·v*.
  const size_t per = size_t(cfg_.horizon) * cfg_.action_dim;
  const std::vector<float> mask = executed_mask(cfg_, lc_.exec_steps, lc_.task_action_dim);
  std::vector<float> tau(size_t(batch.n_samples)), noise(batch.actions.size()), v_target(per);
  for (int s = 0; s < batch.n_samples; ++s) {
    const StepRow& r = steps[size_t(batch.sample_id[size_t(s)])];
    const FlowTransition tr = flow_sde_transition(r.t->k_first + r.j, lc_.flow_steps, lc_.noise_level);
    const float ts = step_time(r);
    tau[size_t(s)] = ts;
    const float* before = &r.t->chain[size_t(r.j) * per];
    transition_target_velocity(tr, before, before + per, v_target.data(), int64_t(per));
    const PpoSampleTerms& pt = terms[r.transition];
    const double g = pt.filtered ? 0.0 : pt.dloss_dlogp / N;
    const float weight = float(-g * log_prob_curvature(tr) / 2.0);
    for (size_t e = 0; e < per; ++e) {
      const size_t at = s * per + e;
      batch.actions[at] = before[e] + (1.0f - ts) * v_target[e];
      noise[at] = before[e] - ts * v_target[e];
      batch.action_mask[at] = weight * mask[e];
    }
  }
  double policy_loss = 0;
  for (const PpoSampleTerms& pt : terms)
    if (!pt.filtered) policy_loss += pt.loss / N;
  model_->accumulate_flow_regression(backend_params_.data(), grads_.data(), batch, tau, noise, 1.0);
  model_->take_loss();
  return policy_loss;
}

double RlLearner::train_value_head(const std::vector<Ready>& micro) {
  const int n = int(micro.size());
  double value_loss = 0;
  const int value_steps = lc_.advantage == Advantage::gae ? lc_.value_steps : 0;
  const int trainers = comm_ != MPI_COMM_NULL ? ranks_in(comm_) : 1;
  std::vector<float> states, values(static_cast<size_t>(n)), targets, dv(static_cast<size_t>(n));
  for (const Ready& r : micro) {
    states.insert(states.end(), r.t.obs.state.begin(), r.t.obs.state.end());
    targets.push_back(r.ret);
  }
  for (int v = 0; v < value_steps; ++v) {
    value_.zero_grads();
    if (n > 0) {
      value_.forward(states.data(), n, values.data());
      const double loss = value_.mse_loss_grad(values.data(), targets.data(), n, dv.data());
      if (v == 0) value_loss = loss;
      value_.backward(dv.data(), n);
    }
    allreduce_sum(value_.grads(), comm_);
    for (float& g : value_.grads()) g /= float(trainers);
    value_.adamw_step(lc_.value_lr, 0.0, ++opt_step_);
  }
  return value_loss;
}

void RlLearner::train_on(const std::vector<Ready>& micro, bool first_epoch) {
  const int n = int(micro.size());
  // The micro-batch as one packed batch whose actions are each transition's x before its k*.
  std::vector<const Transition*> rows;
  std::vector<float> advantages;
  for (const Ready& r : micro) rows.push_back(&r.t), advantages.push_back(r.advantage);
  // GRPO's too: a group's failed episodes outlast its successes, so its advantages summed over
  // transitions are negative, and pushing log π down at every sample has zero mean only where
  // the trainer's π is the generators' (theirs run bf16 weights). Uncentred, sparse GRPO on push
  // fell from 0.085 to 0.017 rollout success in 150k env steps; centred, it held 0.08-0.12.
  normalise_advantages(advantages);
  std::vector<double> logp, logp_prox;
  PackedBatch batch;
  const std::vector<StepRow> steps = step_rows(rows);
  const bool train_policy = version_ >= lc_.policy_from_version;
  if (n > 0 && train_policy) {
    batch = pack(steps);
    logp_prox = log_probs(prox_params_.data(), batch, steps, rows.size());
    logp = micro_ == 0 && first_epoch ? logp_prox : log_probs(backend_params_.data(), batch, steps, rows.size());
  }
  std::vector<PpoSampleTerms> terms(static_cast<size_t>(n));
  double counts[2] = {0, 0};  // unfiltered samples, Σ ratio
  for (int i = 0; i < n && train_policy; ++i) {
    terms[size_t(i)] = ppo_sample_terms(lc_.ppo, logp[size_t(i)], logp_prox[size_t(i)], micro[size_t(i)].t.logp_behav,
                                        advantages[size_t(i)]);
    if (!terms[size_t(i)].filtered) counts[0] += 1, counts[1] += terms[size_t(i)].ratio;
  }
  if (comm_ != MPI_COMM_NULL) sum_over_ranks(comm_, counts, 2);
  const double N = std::max(counts[0], 1.0);
  ops_.zero(grads_.view());
  const double policy_loss = n > 0 && train_policy ? accumulate_policy_grads(batch, steps, terms, N) : 0.0;
  all_reduce_grads();
  if (train_policy) {
    const double norm = optimizer_->global_grad_norm(grads_.data(), MPI_COMM_SELF);
    optimizer_->step(backend_params_.data(), grads_.data(), ++policy_steps_, lc_.lr, norm);
    ops_.download(params_.data(), backend_params_.data(), bytes_of(params_));
  }
  const double value_loss = train_value_head(micro);
  for (int i = 0; i < n && first_epoch; ++i) {
    const PpoSampleTerms& pt = terms[size_t(i)];
    ++stats_.staleness[version_ - micro[size_t(i)].t.version];
    if (pt.filtered) ++stats_.filtered;
    else ++stats_.used, stats_.clipped += pt.clipped;
  }
  stats_.policy_loss = policy_loss, stats_.value_loss = value_loss, stats_.mean_ratio = counts[1] / N;
}

}  // namespace emb
