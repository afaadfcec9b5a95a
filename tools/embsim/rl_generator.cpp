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
#include "policy_batch.hpp"
#include "rl/backoff.hpp"
#include "rl/channel.hpp"
#include "rl/flow_sde.hpp"
#include "rl/stage_pacer.hpp"
#include "rl/weight_push.hpp"
#include "rl_messages.hpp"
#include "rl_roles.hpp"
#include "rl_shutdown.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

// Draw streams of the behaviour policy, keyed by (environment, episode, chunk): a chunk's draws
// do not depend on the batch it was sampled in.
constexpr uint64_t kStreamInitialNoise = 1ull << 61, kStreamSdeNoise = (1ull << 61) + 1, kStreamKStar = (1ull << 61) + 2;

uint64_t chunk_key(const ActionRequest& r) { return (uint64_t(r.episode) << 20) ^ uint64_t(r.chunk); }

}  // namespace

nlohmann::json run_generator(const RlSetup& s) {
  const RlOptions& o = s.o;
  const RlGroups& g = s.groups;
  const ModelConfig& cfg = s.cfg;
  const std::vector<int> sims = simulators_of_generator(g.index, int(g.simulators.size()), int(g.generators.size()));
  std::vector<std::unique_ptr<ChannelReceiver>> from_sim;
  std::vector<std::unique_ptr<ChannelSender>> to_sim;
  for (int sim : sims) {
    from_sim.push_back(std::make_unique<ChannelReceiver>(MPI_COMM_WORLD, g.simulators[size_t(sim)], kTagRequest));
    to_sim.push_back(std::make_unique<ChannelSender>(MPI_COMM_WORLD, g.simulators[size_t(sim)], kTagReply,
                                                     o.channel_capacity));
  }
  WeightSubscriber weights(MPI_COMM_WORLD, g.trainers[0], kTagWeights, int64_t(s.init_params.size()));
  StopSignal stop(g);
  std::vector<Outbox> replies;
  for (auto& t : to_sim) replies.emplace_back(*t);
  Watchdog watchdog(o.watchdog_s);
  Backoff backoff;
  const std::unique_ptr<Ops> ops = make_ops(o.backend, s.local_rank);
  std::unique_ptr<Model> model = make_model(cfg, ops.get());
  std::vector<float> params = s.init_params;  // where weight pushes land
  OpsBuffer<float> backend_params(*ops, int64_t(params.size()));
  auto upload_params = [&] { ops->upload(backend_params.data(), params.data(), params.size() * sizeof(float)); };
  upload_params();
  int64_t version = s.start_version;

  struct Pending {
    size_t sim;
    ActionRequest request;
    Clock::time_point arrived;
  };
  std::deque<Pending> pending;
  const int my_envs = int(sims.size()) * o.envs_per_simulator;
  const bool rounds = o.mode != RlMode::async;
  // The batching timeout is a modelled time too: it runs as slow as the stages it waits for.
  const double timeout_ms = o.batch_timeout_ms * (s.cost.on() ? s.cost.config().time_scale : 1.0);
  const int64_t round_quota = int64_t(s.round_chunks_per_env) * my_envs;
  int32_t round = 0;
  int64_t served_in_round = 0, batches = 0, samples = 0, weight_updates = 0;
  std::map<int, int64_t> batch_sizes;
  LoopClock clock;
  StagePacer pacer(s.cost.on());
  const size_t per = size_t(cfg.horizon) * cfg.action_dim;
  const std::vector<float> mask = executed_mask(cfg, s.exec_steps, s.task.action_dim);

  for (;;) {
    const Clock::time_point loop_start = Clock::now();
    bool worked = false;
    if (stop.poll()) break;
    for (size_t i = 0; i < from_sim.size(); ++i) {
      std::vector<uint8_t> bytes;
      while (from_sim[i]->try_recv(bytes)) {
        Pending p{i, {}, Clock::now()};
        decode(bytes, p.request);
        pending.push_back(std::move(p));
        worked = true;
      }
    }
    // Weights: async takes the newest whenever it comes; rounds move on only when the round
    // is served and the next version is there.
    const bool round_served = rounds && served_in_round == round_quota;
    if (!rounds || round_served) {
      int64_t v = version;
      if (weights.poll(params, v) && v > version) {
        upload_params();
        version = v, ++weight_updates, worked = true;
        if (round_served) served_in_round = 0, ++round;
      }
    }
    // This round's requests, oldest first (a simulator may already ask for its next round's
    // chunks while another still finishes this one).
    std::vector<size_t> eligible;
    const int largest = o.mode == RlMode::sync ? my_envs : o.max_batch;  // lockstep: every environment at once
    if (!(rounds && served_in_round == round_quota))
      for (size_t i = 0; i < pending.size() && int(eligible.size()) < largest; ++i)
        if (!rounds || pending[i].request.round == round) eligible.push_back(i);
    size_t batch = 0;
    if (!eligible.empty()) {
      if (o.mode == RlMode::sync) {
        if (int(eligible.size()) >= my_envs) batch = size_t(my_envs);
      } else {
        const double waited_ms =
            std::chrono::duration<double, std::milli>(Clock::now() - pending[eligible[0]].arrived).count();
        if (int(eligible.size()) >= o.max_batch || waited_ms >= timeout_ms) batch = eligible.size();
      }
      if (rounds) batch = size_t(std::min<int64_t>(int64_t(batch), round_quota - served_in_round));
    }
    if (batch > 0) {
      pacer.begin();
      std::vector<Pending> take;
      for (size_t j = 0; j < batch; ++j) take.push_back(std::move(pending[eligible[j]]));
      for (size_t j = batch; j-- > 0;) pending.erase(pending.begin() + int64_t(eligible[j]));
      std::vector<PolicyObservation> obs;
      for (const Pending& p : take) obs.push_back({p.request.obs.embodiment, &p.request.obs.state, &p.request.obs.vl});
      PackedBatch packed = pack_policy_batch(cfg, obs, "rl generator");
      StochasticSteps sde;
      sde.noise_level = o.noise_level;
      sde.resize(packed.n_samples, s.flow_steps, per);
      for (int b = 0; b < packed.n_samples; ++b) {
        const ActionRequest& r = take[size_t(packed.sample_id[size_t(b)])].request;
        CounterRng x0(o.seed, RngStream::flow_noise, kStreamInitialNoise + uint64_t(r.env), chunk_key(r));
        CounterRng xi(o.seed, RngStream::flow_noise, kStreamSdeNoise + uint64_t(r.env), chunk_key(r));
        CounterRng k(o.seed, RngStream::flow_time, kStreamKStar + uint64_t(r.env), chunk_key(r));
        draw_stochastic_steps(sde, o.sde_steps, b, per, s.flow_steps, k, xi);
        for (size_t e = 0; e < per; ++e) packed.actions[b * per + e] = float(x0.normal(e));
      }
      integrate_flow(*model, backend_params.data(), packed, s.flow_steps, &sde);
      for (int b = 0; b < packed.n_samples; ++b) {
        const size_t i = size_t(packed.sample_id[size_t(b)]);
        const ActionRequest& r = take[i].request;
        ActionReply reply;
        reply.env = r.env, reply.version = version;
        reply.k_first = sde.k_first[size_t(b)], reply.k_count = sde.k_count[size_t(b)];
        const auto chain = sde.chain.begin() + int64_t(size_t(b) * size_t(s.flow_steps + 1) * per);
        reply.chain.assign(chain, chain + int64_t(size_t(reply.k_count + 1) * per));
        reply.logp = chain_log_prob(reply.k_first, reply.k_count, s.flow_steps, o.noise_level, reply.chain.data(),
                                    &sde.velocity[size_t(b) * size_t(s.flow_steps) * per], mask.data(), int64_t(per));
        for (int h = 0; h < s.exec_steps; ++h)
          for (int k = 0; k < s.task.action_dim; ++k)
            reply.actions.push_back(std::clamp(packed.actions[b * per + size_t(h * cfg.action_dim + k)], -1.f, 1.f));
        replies[take[i].sim].push(encode(reply));
      }
      pacer.finish(s.cost.gen_batch_seconds(int(batch)));
      served_in_round += int64_t(batch), ++batches, samples += int64_t(batch), ++batch_sizes[int(batch)];
      worked = true;
    }
    for (Outbox& r : replies) worked = r.flush() | worked;
    for (auto& t : to_sim) t->progress();
    if (worked) {
      backoff.reset();
      watchdog.progress();
      clock.busy_since(loop_start);
    } else {
      watchdog.check(g, rounds && served_in_round == round_quota ? "the next weights from trainer 0"
                                                                 : "requests from its simulators");
      backoff.wait();
      clock.wait_since(loop_start);
    }
  }
  std::vector<ChannelReceiver*> receivers;
  std::vector<ChannelSender*> senders;
  for (auto& r : from_sim) receivers.push_back(r.get());
  for (auto& t : to_sim) senders.push_back(t.get());
  drain_and_finish(g, receivers, senders, o.watchdog_s, nullptr, [&] { weights.poll(params, version); });
  nlohmann::json sizes = nlohmann::json::object();
  for (auto& [b, n] : batch_sizes) sizes[std::to_string(b)] = n;
  return {{"role", "generator"}, {"rank", g.world_rank}, {"batches", batches}, {"samples", samples},
          {"mean_batch", batches ? double(samples) / double(batches) : 0.0}, {"batch_sizes", sizes},
          {"weight_updates", weight_updates}, {"final_version", version}, {"time", clock.json()},
          {"pacer", pacer_json(pacer)}};
}

}  // namespace emb
