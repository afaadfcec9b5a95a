// The generator role (rl_roles.hpp): dynamic batching of its simulators' requests and the
// policy's chunks with one Flow-SDE step each (policy_batch.hpp), tagged with the version of
// the weights that made them.
#include <algorithm>
#include <deque>
#include <memory>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "kernels/make_ops.hpp"
#include "kernels/ops_buffer.hpp"
#include "rl/roles/policy_batch.hpp"
#include "rl/backoff.hpp"
#include "rl/channel.hpp"
#include "rl/flow_sde.hpp"
#include "rl/stage_pacer.hpp"
#include "rl/weight_push.hpp"
#include "rl/roles/rl_messages.hpp"
#include "rl/roles/rl_roles.hpp"
#include "rl/roles/rl_shutdown.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

// Draw streams of the behaviour policy, keyed by (environment, episode, chunk): a chunk's draws
// do not depend on the batch it was sampled in.
constexpr uint64_t kStreamInitialNoise = 1ull << 61, kStreamSdeNoise = (1ull << 61) + 1, kStreamKStar = (1ull << 61) + 2;

uint64_t chunk_key(const ActionRequest& r) { return (uint64_t(r.episode) << 20) ^ uint64_t(r.chunk); }

// The weights the generators held at the run's start version: the run's first version is the
// checkpoint's as loaded; a later one (train.resume) reached them as a push, rounded to bf16,
// and a resumed run serves the same to continue bit for bit.
std::vector<float> weights_at_start(const RlSetup& s) {
  return s.start_version > s.run_start_version ? weights_as_pushed(s.init_params) : s.init_params;
}

// The world ranks of simulators `indices`.
std::vector<int> world_ranks(const std::vector<int>& simulators, const std::vector<int>& indices) {
  std::vector<int> ranks;
  for (int i : indices) ranks.push_back(simulators[size_t(i)]);
  return ranks;
}

// A simulator's request and when it came.
struct Pending {
  size_t sim;
  ActionRequest request;
  Clock::time_point arrived;
};

// The generator rank's loop: its simulators' channels, the policy on run.device and the
// requests waiting for a batch.
class GeneratorLoop {
 public:
  explicit GeneratorLoop(const RlSetup& s);
  // Turns until trainer 0 says stop; then this rank's statistics.
  nlohmann::json run();

 private:
  void upload_params() { ops_->upload(backend_params_.data(), params_.data(), params_.size() * sizeof(float)); }
  bool round_served() const { return rounds_ && served_in_round_ == round_quota_; }
  bool receive_requests();
  bool take_new_weights();
  std::vector<size_t> eligible_requests() const;
  size_t batch_size(const std::vector<size_t>& eligible) const;
  void serve(const std::vector<size_t>& eligible, size_t batch);
  void draw_chains(const std::vector<Pending>& take, PackedBatch& packed, StochasticSteps& sde) const;
  void reply(const std::vector<Pending>& take, const PackedBatch& packed, const StochasticSteps& sde);
  nlohmann::json summary();

  const RlSetup& s_;
  const RlOptions& o_;
  const RlGroups& g_;
  const ModelConfig& cfg_;
  const std::vector<int> sims_;
  std::vector<std::unique_ptr<ChannelReceiver>> from_sim_;
  std::vector<std::unique_ptr<ChannelSender>> to_sim_;
  WeightSubscriber weights_;
  PeerSilence sim_silence_, trainer_silence_;  // async: each simulator's requests; trainer 0's weights
  StopSignal stop_;
  std::vector<Outbox> replies_;
  RoleLoop loop_;
  const std::unique_ptr<Ops> ops_;
  std::unique_ptr<Model> model_;
  std::vector<float> params_;  // where weight pushes land
  OpsBuffer<float> backend_params_;
  int64_t version_;
  std::deque<Pending> pending_;
  const int my_envs_;
  const bool rounds_;
  const double timeout_ms_;
  const int64_t round_quota_;
  int32_t round_ = 0;
  int64_t served_in_round_ = 0, batches_ = 0, samples_ = 0, weight_updates_ = 0;
  std::map<int, int64_t> batch_sizes_;
  StagePacer pacer_;
  const size_t per_;  // action values of one chunk
  const std::vector<float> mask_;
};

GeneratorLoop::GeneratorLoop(const RlSetup& s)
    : s_(s),
      o_(s.o),
      g_(s.groups),
      cfg_(s.cfg),
      sims_(simulators_of_generator(g_.index, int(g_.simulators.size()), int(g_.generators.size()))),
      weights_(MPI_COMM_WORLD, g_.trainers[0], kTagWeights, int64_t(s.init_params.size())),
      sim_silence_(world_ranks(g_.simulators, sims_), o_.watchdog_s, o_.mode == RlMode::async),
      trainer_silence_({g_.trainers[0]}, o_.watchdog_s, o_.mode == RlMode::async),
      stop_(g_),
      loop_(o_.watchdog_s),
      ops_(make_ops(o_.backend, s.local_rank)),
      model_(make_model(cfg_, ops_.get())),
      params_(weights_at_start(s)),
      backend_params_(*ops_, int64_t(params_.size())),
      version_(s.start_version),
      my_envs_(int(sims_.size()) * o_.envs_per_simulator),
      rounds_(o_.mode != RlMode::async),
      // The batching timeout is a modelled time too: it runs as slow as the stages it waits for.
      timeout_ms_(o_.batch_timeout_ms * (s.cost.on() ? s.cost.config().time_scale : 1.0)),
      round_quota_(int64_t(s.round_chunks_per_env) * my_envs_),
      pacer_(s.cost.on()),
      per_(size_t(cfg_.horizon) * cfg_.action_dim),
      mask_(executed_mask(cfg_, s.exec_steps, s.task.action_dim)) {
  for (int sim : sims_) {
    from_sim_.push_back(std::make_unique<ChannelReceiver>(MPI_COMM_WORLD, g_.simulators[size_t(sim)], kTagRequest));
    to_sim_.push_back(std::make_unique<ChannelSender>(MPI_COMM_WORLD, g_.simulators[size_t(sim)], kTagReply,
                                                      o_.channel_capacity));
  }
  for (auto& t : to_sim_) replies_.emplace_back(*t);
  upload_params();
}

bool GeneratorLoop::receive_requests() {
  bool worked = false;
  for (size_t i = 0; i < from_sim_.size(); ++i) {
    std::vector<uint8_t> bytes;
    while (from_sim_[i]->try_recv(bytes)) {
      sim_silence_.heard(i);
      Pending p{i, {}, Clock::now()};
      decode(bytes, p.request);
      pending_.push_back(std::move(p));
      worked = true;
    }
  }
  return worked;
}

// Weights: async takes the newest whenever it comes; rounds move on only when the round is
// served and the next version is there.
bool GeneratorLoop::take_new_weights() {
  const bool served = round_served();
  if (rounds_ && !served) return false;
  int64_t v = version_;
  if (!weights_.poll(params_, v) || v <= version_) return false;
  trainer_silence_.heard(0);
  upload_params();
  version_ = v, ++weight_updates_;
  if (served) served_in_round_ = 0, ++round_;
  return true;
}

// This round's requests, oldest first (a simulator may already ask for its next round's
// chunks while another still finishes this one).
std::vector<size_t> GeneratorLoop::eligible_requests() const {
  std::vector<size_t> eligible;
  const int largest = o_.mode == RlMode::sync ? my_envs_ : o_.max_batch;  // lockstep: every environment at once
  if (!round_served())
    for (size_t i = 0; i < pending_.size() && int(eligible.size()) < largest; ++i)
      if (!rounds_ || pending_[i].request.round == round_) eligible.push_back(i);
  return eligible;
}

// 0: wait for more (sync: every environment; async: rl.max_batch or the timeout).
size_t GeneratorLoop::batch_size(const std::vector<size_t>& eligible) const {
  if (eligible.empty()) return 0;
  size_t batch = 0;
  if (o_.mode == RlMode::sync) {
    if (int(eligible.size()) >= my_envs_) batch = size_t(my_envs_);
  } else {
    const double waited_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - pending_[eligible[0]].arrived).count();
    if (int(eligible.size()) >= o_.max_batch || waited_ms >= timeout_ms_) batch = eligible.size();
  }
  if (rounds_) batch = size_t(std::min<int64_t>(int64_t(batch), round_quota_ - served_in_round_));
  return batch;
}

// Each chunk's initial noise, SDE steps and noise from its own streams.
void GeneratorLoop::draw_chains(const std::vector<Pending>& take, PackedBatch& packed, StochasticSteps& sde) const {
  sde.noise_level = o_.noise_level;
  sde.resize(packed.n_samples, s_.flow_steps, per_);
  for (int b = 0; b < packed.n_samples; ++b) {
    const ActionRequest& r = take[size_t(packed.sample_id[size_t(b)])].request;
    CounterRng x0(o_.seed, RngStream::flow_noise, kStreamInitialNoise + uint64_t(r.env), chunk_key(r));
    CounterRng xi(o_.seed, RngStream::flow_noise, kStreamSdeNoise + uint64_t(r.env), chunk_key(r));
    CounterRng k(o_.seed, RngStream::flow_time, kStreamKStar + uint64_t(r.env), chunk_key(r));
    draw_stochastic_steps(sde, o_.sde_steps, b, per_, s_.flow_steps, k, xi);
    x0.normals(0, int64_t(per_), &packed.actions[b * per_]);
  }
}

// Each chunk's executed actions, its chain and its log-probability, to its simulator.
void GeneratorLoop::reply(const std::vector<Pending>& take, const PackedBatch& packed, const StochasticSteps& sde) {
  for (int b = 0; b < packed.n_samples; ++b) {
    const size_t i = size_t(packed.sample_id[size_t(b)]);
    const ActionRequest& r = take[i].request;
    ActionReply reply;
    reply.env = r.env, reply.version = version_;
    reply.k_first = sde.k_first[size_t(b)], reply.k_count = sde.k_count[size_t(b)];
    const auto chain = sde.chain.begin() + int64_t(size_t(b) * size_t(s_.flow_steps + 1) * per_);
    reply.chain.assign(chain, chain + int64_t(size_t(reply.k_count + 1) * per_));
    reply.logp = chain_log_prob(reply.k_first, reply.k_count, s_.flow_steps, o_.noise_level, reply.chain.data(),
                                &sde.velocity[size_t(b) * size_t(s_.flow_steps) * per_], mask_.data(), int64_t(per_));
    for (int h = 0; h < s_.exec_steps; ++h)
      for (int k = 0; k < s_.task.action_dim; ++k)
        reply.actions.push_back(std::clamp(packed.actions[b * per_ + size_t(h * cfg_.action_dim + k)], -1.f, 1.f));
    replies_[take[i].sim].push(encode(reply));
  }
}

// The first `batch` eligible requests sampled as one batch.
void GeneratorLoop::serve(const std::vector<size_t>& eligible, size_t batch) {
  pacer_.begin();
  std::vector<Pending> take;
  for (size_t j = 0; j < batch; ++j) take.push_back(std::move(pending_[eligible[j]]));
  for (size_t j = batch; j-- > 0;) pending_.erase(pending_.begin() + int64_t(eligible[j]));
  // In environment order, not arrival order: a sample's place in the packed batch moves its tokens
  // across the attention's tiles, which rounds its actions differently, so a sync round (every
  // environment in one batch) is bit-reproducible only when the order is fixed (a resumed run's
  // simulators replay their episodes and may ask in another order).
  std::stable_sort(take.begin(), take.end(), [](const Pending& a, const Pending& b) { return a.request.env < b.request.env; });
  std::vector<PolicyObservation> obs;
  for (const Pending& p : take) obs.push_back({p.request.obs.embodiment, &p.request.obs.state, &p.request.obs.vl});
  PackedBatch packed = pack_policy_batch(cfg_, obs, "rl generator");
  StochasticSteps sde;
  draw_chains(take, packed, sde);
  integrate_flow(*model_, backend_params_.data(), packed, s_.flow_steps, &sde);
  reply(take, packed, sde);
  pacer_.finish(s_.cost.gen_batch_seconds(int(batch)));
  served_in_round_ += int64_t(batch), ++batches_, samples_ += int64_t(batch), ++batch_sizes_[int(batch)];
}

nlohmann::json GeneratorLoop::run() {
  loop_.start(g_);
  sim_silence_.restart(), trainer_silence_.restart();
  for (;;) {
    const Clock::time_point turn_start = Clock::now();
    if (stop_.poll()) break;
    bool worked = receive_requests();
    worked = take_new_weights() || worked;
    const std::vector<size_t> eligible = eligible_requests();
    const size_t batch = batch_size(eligible);
    if (batch > 0) serve(eligible, batch), worked = true;
    for (Outbox& r : replies_) worked = r.flush() | worked;
    for (auto& t : to_sim_) t->progress();
    sim_silence_.check(g_, "requests"), trainer_silence_.check(g_, "weights");
    loop_.end_turn(worked, turn_start, g_,
                   round_served() ? "the next weights from trainer 0" : "requests from its simulators");
  }
  return summary();
}

nlohmann::json GeneratorLoop::summary() {
  std::vector<ChannelReceiver*> receivers;
  std::vector<ChannelSender*> senders;
  for (auto& r : from_sim_) receivers.push_back(r.get());
  for (auto& t : to_sim_) senders.push_back(t.get());
  drain_and_finish(g_, receivers, senders, o_.watchdog_s, nullptr, [&] { weights_.poll(params_, version_); });
  nlohmann::json sizes = nlohmann::json::object();
  for (auto& [b, n] : batch_sizes_) sizes[std::to_string(b)] = n;
  return {{"role", "generator"}, {"rank", g_.world_rank}, {"batches", batches_}, {"samples", samples_},
          {"mean_batch", batches_ ? double(samples_) / double(batches_) : 0.0}, {"batch_sizes", sizes},
          {"weight_updates", weight_updates_}, {"final_version", version_}, {"time", loop_.clock().json()},
          {"pacer", pacer_json(pacer_)}};
}

}  // namespace

nlohmann::json run_generator(const RlSetup& s) { return GeneratorLoop(s).run(); }

}  // namespace emb
