#include "model/flow_matching.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "model/wan_schedule.hpp"

namespace emb {
namespace {

// The N(0, 1) draws of one gr00t sample: its [Hz, A] actions.
int64_t gr00t_sample_draws(const ModelConfig& cfg) { return int64_t(cfg.horizon) * cfg.action_dim; }

// The N(0, 1) draws of a wan sample's token of kind `kind`: a noisy video token's patch, an
// action token's action; every other token (clean video, state) draws none.
int wan_token_draws(const ModelConfig& cfg, int32_t kind) {
  if (kind == kNoisyVideo) return cfg.patch_dim_in();
  return kind == kAction ? cfg.action_dim : 0;
}

void draw_gr00t(const ModelConfig& cfg, const PackedBatch& b, int64_t step, uint64_t seed, FlowDraws& d) {
  const int B = b.n_samples;
  const int64_t per_sample = gr00t_sample_draws(cfg);
  d.tau.resize(size_t(B));
  d.tq.resize(size_t(B));
  d.noise.resize(size_t(B * per_sample));
  for (int s = 0; s < B; ++s) {
    const uint64_t id = uint64_t(b.sample_id[size_t(s)]);
    const double beta = CounterRng(seed, RngStream::flow_time, uint64_t(step), id).beta_alpha_1(0, 1.5);
    const double tau = (0.999 - beta) / 0.999;
    d.tau[size_t(s)] = float(tau);
    d.tq[size_t(s)] = timestep_bucket(float(tau));
    const CounterRng noise(seed, RngStream::flow_noise, uint64_t(step), id);
    noise.normals(0, per_sample, &d.noise[size_t(s * per_sample)]);
  }
  d.temb_t.assign(size_t(b.n_tokens), 0.0f);
  d.temb_t_lo.clear();
  for (int64_t t = 0; t < b.n_tokens; ++t)
    if (b.seq[size_t(t)] >= 0) d.temb_t[size_t(t)] = float(d.tq[size_t(b.seq[size_t(t)])]);
}

void draw_wan(const ModelConfig& cfg, const PackedBatch& b, const TokenLayout& L, int64_t step, uint64_t seed,
              FlowDraws& d) {
  const int64_t T = b.n_tokens;
  const int P = cfg.patch_dim_in(), A = cfg.action_dim;
  const uint64_t stride = uint64_t(std::max(P, A));
  d.sigma.assign(size_t(T), 0.0f);
  d.loss_weight.assign(size_t(T), 0.0f);
  d.temb_t.assign(size_t(T), 0.0f);
  d.temb_t_lo.assign(size_t(T), 0.0f);
  d.video_noise.assign(size_t(L.n_video * P), 0.0f);
  d.act_noise.assign(size_t(int64_t(L.action.size()) * A), 0.0f);
  const WanSchedule schedule(cfg.shift);
  for (int64_t t = 0; t < T; ++t) {
    const int32_t s = b.seq[size_t(t)], kind = b.kind[size_t(t)];
    if (s < 0 || kind == kClean) continue;
    const uint64_t id = uint64_t(b.sample_id[size_t(s)]);
    // The block's timestep id, uniform over the schedule's ids.
    const double u = CounterRng(seed, RngStream::flow_time, uint64_t(step), id).uniform(uint64_t(b.blk[size_t(t)]));
    const int i = std::min(kWanTrainTimesteps - 1, int(u * kWanTrainTimesteps));
    const float sigma = float(schedule.sigma[size_t(i)]);
    d.sigma[size_t(t)] = sigma;
    d.loss_weight[size_t(t)] = float(schedule.weight[size_t(i)]);
    const double t_exact = 1000.0 * schedule.sigma[size_t(i)];
    d.temb_t[size_t(t)] = float(t_exact);
    d.temb_t_lo[size_t(t)] = float(t_exact - double(float(t_exact)));
    if (kind == kState) continue;  // a state token takes its block's timestep and is never noised
    const uint64_t base = uint64_t(L.index_in_sample[size_t(t)]) * stride;
    float* out = kind == kNoisyVideo ? &d.video_noise[size_t(L.video_row[size_t(t)]) * size_t(P)]
                                     : &d.act_noise[size_t(L.action_row[size_t(t)]) * size_t(A)];
    CounterRng(seed, RngStream::flow_noise, uint64_t(step), id).normals(base, wan_token_draws(cfg, kind), out);
  }
}

}  // namespace

int64_t flow_noise_draws(const ModelConfig& cfg, const PackedBatch& batch) {
  if (cfg.family == Family::gr00t) return batch.n_samples * gr00t_sample_draws(cfg);
  int64_t draws = 0;
  for (int64_t t = 0; t < batch.n_tokens; ++t)
    if (batch.seq[size_t(t)] >= 0) draws += wan_token_draws(cfg, batch.kind[size_t(t)]);  // padding draws none
  return draws;
}

int32_t timestep_bucket(float tau) {
  const float product = tau * 1000.0f;  // float32, as upstream multiplies its float32 tensor
  return int32_t(std::trunc(product));
}

void draw_flow(const ModelConfig& cfg, const PackedBatch& batch, const TokenLayout& layout, int64_t step,
               uint64_t seed, FlowDraws& draws) {
  if (cfg.family == Family::gr00t)
    draw_gr00t(cfg, batch, step, seed, draws);
  else
    draw_wan(cfg, batch, layout, step, seed, draws);
}

}  // namespace emb
