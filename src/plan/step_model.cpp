#include "plan/step_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "model/flow_matching.hpp"
#include "model/model.hpp"
#include "plan/model_cost.hpp"
#include "plan/computed_attention.hpp"
#include "plan/gradient_traffic.hpp"
#include "plan/op_calls.hpp"
#include "plan/plan_batches.hpp"
#include "parallel/shard_layout.hpp"
#include "parallel/zero3_schedule.hpp"

namespace emb {
namespace {

// make_plan for a sample's tokens or a recompute-free variant's work: no state figures.
const PlanSharding kNoState{0, {}, false};

// A communication bucket (ShardLayout's: consecutive units joined while they fit in bucket_bytes
// of fp32, a unit never split) and the elements of each collective call that moves it, as
// DataParallel issues them: ZeRO-3 gathers every piece of a bucket (a bucket mixing frozen and
// trained tensors is cut into pieces where they change), ZeRO-2's update its trained pieces; the
// gradients' reductions, ZeRO's reduce-scatters and DDP's all-reduces, run over its trained pieces.
struct BucketCalls {
  double params = 0;
  std::vector<double> pieces, trained_pieces;
};

std::vector<BucketCalls> bucket_calls(const ShardLayout& layout) {
  std::vector<BucketCalls> buckets;
  for (int b = 0; b < layout.n_buckets(); ++b) {
    BucketCalls c;
    c.params = double(layout.bucket(b).count);
    layout.for_each_piece(b, true, [&](const Piece& p) { c.pieces.push_back(double(p.count)); });
    layout.for_each_piece(b, false, [&](const Piece& p) { c.trained_pieces.push_back(double(p.count)); });
    buckets.push_back(c);
  }
  return buckets;
}

// The exposed seconds of one pass over buckets on one link: bucket k computes for comp[k]
// after `before[k]` finished (issued one bucket ahead, or all at the pass's start when
// prefetch_all), and issues `after[k]` when it is done; collectives run one at a time in issue
// order. Exposed = the pass's wall time minus its compute.
double pass_exposed(const std::vector<double>& comp, const std::vector<double>& before,
                    const std::vector<double>& after, bool prefetch_all) {
  const size_t n = comp.size();
  std::vector<double> ready(n, 0);
  double link = 0, t = 0, busy = 0;
  if (prefetch_all) {
    for (size_t k = 0; k < n; ++k) ready[k] = link += before[k];
  } else {
    ready[0] = link = before[0];
  }
  for (size_t k = 0; k < n; ++k) {
    t = std::max(t, ready[k]);
    if (!prefetch_all && k + 1 < n) ready[k + 1] = link = std::max(link, t) + before[k + 1];
    t += comp[k];
    busy += comp[k];
    if (after[k] > 0) link = std::max(link, t) + after[k];
  }
  return std::max(t, link) - busy;
}

// Forward FLOPs per sample that recompute re-runs in backward.
double recompute_flops(const ModelConfig& c, const PlanReport& p) {
  const double T = double(p.tokens_per_sample), Tc = double(p.context_per_sample), D = c.d_model;
  switch (c.recompute) {
    case Recompute::none: return 0;
    case Recompute::full: return p.flops_fwd;
    case Recompute::selective: break;
  }
  // The attention cores and their q/k/v projections.
  double qkv = 0;
  if (c.family == Family::wan) {
    qkv = c.n_layers * (6 * T * D * D + 2 * T * D * D + 4 * Tc * D * D);
  } else {
    for (int l = 0; l < c.n_layers; ++l) qkv += l % 2 == 0 ? 2 * T * D * D + 4 * Tc * c.d_ctx * D : 6 * T * D * D;
  }
  return p.attn_flops_fwd + qkv;
}

// What a sample costs to read: fp16 latents or context features, fp32 actions and state.
double data_bytes_per_sample(const ModelConfig& c, const PlanReport& p) {
  if (c.family == Family::wan)
    return 2.0 * c.latent_channels * c.latent_frames * c.latent_height * c.latent_width +
           2.0 * c.max_text_tokens * c.d_ctx +
           4.0 * (c.latent_frames / std::max(1, c.frames_per_block)) * c.actions_per_block * c.action_dim;
  return 2.0 * double(p.context_per_sample) * c.d_ctx + 4.0 * (c.state_dim + c.horizon * c.action_dim);
}

// E[max of n independent standard normals] (0 for n = 1): how far ahead of the typical rank the
// slowest of n is, in units of one rank's spread.
double expected_max_of_normals(int n) {
  if (n < 2) return 0;
  const double pi = 3.14159265358979323846, dx = 1e-3;
  double e = 0;
  for (double x = -10; x < 10; x += dx) {
    const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * pi), cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    e += x * n * pdf * std::pow(cdf, n - 1) * dx;
  }
  return e;
}

// Samples and micro-batches of the busiest rank (the step waits for it), and the tokens of the
// micro-batch the prediction costs.
void size_micro_batches(const Workload& w, StepPrediction& s) {
  const int R = w.ranks;
  s.samples_per_rank = int((w.global_batch + R - 1) / R);
  const PlanReport sample = make_plan(w.model, R, 1, w.sample, DType::f32, kNoState);
  const int64_t sample_tokens = sample.tokens_per_sample + sample.context_per_sample;
  const int64_t per_mb = !w.packing && w.micro_batch > 0 ? w.micro_batch
                                                         : std::max<int64_t>(1, w.tokens_per_mb / sample_tokens);
  s.samples_per_mb = int(std::min<int64_t>(per_mb, s.samples_per_rank));
  s.micro_batches = (s.samples_per_rank + s.samples_per_mb - 1) / s.samples_per_mb;
  s.tokens_per_mb = s.samples_per_mb * sample_tokens;
}

// A rank's compute rates: ranks sharing a CPU node share its cores, and run faster with cores
// to spare.
struct RankRates {
  int per_node = 1;  // ranks that share a node (and its storage)
  double share = 1, gemm = 0, attention = 0, memory = 0;
  double memory_share = 1;  // share for memory-bound work: a lone rank's streams run faster still
  double gemm_base = 0;  // the file's GEMM rate at the rank's share; gemm: at the model width's efficiency
};

RankRates rank_rates(const Hardware& hw, const Workload& w) {
  const int R = w.ranks;
  const bool bf16 = w.model.precision == Precision::bf16;
  RankRates r;
  r.per_node = hw.ranks_share_node ? R : std::min(R, hw.devices_per_node);
  const bool spare_cores = hw.ranks_share_node && R < hw.devices_per_node;
  r.share = device_share(hw, R) * (spare_cores ? hw.spare_core_speedup : 1.0);
  r.memory_share = device_share(hw, R) * (spare_cores ? hw.memory_spare_core_speedup : 1.0);
  if (w.fp8 && hw.gemm_fp8 <= 0)
    throw Error(str(hw.path, ": model.fp8 = on needs gemm_flops.fp8 in the hardware file"), kExitInput);
  r.gemm_base = (w.fp8 ? hw.gemm_fp8 : bf16 ? hw.gemm_bf16 : hw.gemm_fp32) * r.share;
  r.gemm = r.gemm_base * gemm_efficiency(hw, w.model.d_model);
  r.attention = (bf16 ? hw.attention_bf16 : hw.attention_fp32) * r.share;
  r.memory = hw.memory_bytes_per_s * r.memory_share;
  return r;
}

// A rank's share of the last-level cache: its node's ranks share it.
double cache_per_rank(const Hardware& hw, const Workload& w) {
  return hw.last_level_cache_bytes / (hw.ranks_share_node ? w.ranks : 1);
}

// Seconds of one sample's forward GEMMs, each linear at the rate of its shape (linear_efficiency:
// a narrow encoder or head below the trunk's rate); the backward's two GEMMs per linear run at the
// same rate (the probe measures forward + backward together).
double gemm_forward_seconds(const Hardware& hw, const Workload& w, const RankRates& r, const PlanReport& p) {
  double seconds = 0;
  for (const auto& [narrow, flops] : p.gemm_flops_fwd_by_narrow)
    seconds += flops / (r.gemm_base * linear_efficiency(hw, narrow, w.model.d_model));
  return seconds;
}

// Seconds of a pass's elementwise ops: their bytes at the rank's memory bandwidth, but the
// arithmetic ones' at the larger of that and their elements and rows at the file's
// elementwise_element_seconds and elementwise_row_seconds where it has a figure (a GPU's file has
// none: there they stream like the rest). The larger, as a roofline: rope and the sinusoids are
// their arithmetic at any width, a norm over wide rows streams (norm_modulate_forward at width
// 256 in scaling_cpu's steps: 0.50 ms where its bytes took 0.49 and the probe's arithmetic 0.34),
// over narrow rows it is its rows' statistics (width 64 in tiny_wan's: 0.56 ms for
// norm_modulate_backward, its bytes 0.23; regression/plan_validation.md session 32).
double elementwise_seconds(const Hardware& hw, const RankRates& r, const ElementwisePass& pass) {
  double seconds = pass.bytes / r.memory;
  for (const auto& [op, work] : pass.arithmetic) {
    const auto element = hw.elementwise_element_s.find(op);
    if (element == hw.elementwise_element_s.end()) continue;
    const auto row = hw.elementwise_row_s.find(op);
    const double row_s = row == hw.elementwise_row_s.end() ? 0.0 : row->second;
    const double arithmetic_s = (work.elements * element->second + work.rows * row_s) / r.share;
    seconds += std::max(0.0, arithmetic_s - work.bytes / r.memory);
  }
  return seconds;
}

// Seconds of one sample's forward, backward and recompute on one rank, by kind (p: the
// micro-batch's plan, p_none: the same without recompute); sets the FLOPs per sample.
struct SampleSeconds {
  ComputeKinds fwd, bwd, recompute;
};

SampleSeconds sample_seconds(const Hardware& hw, const Workload& w, const RankRates& r, const PlanReport& p,
                             const PlanReport& p_none, const ElementwiseWork& elementwise, StepPrediction& s) {
  const ModelConfig& c = w.model;
  // The elementwise ops the model issues in each pass (its dry step), their bytes at the memory
  // bandwidth and the arithmetic ones' elements at their figures; with model.fp8 the FP8 linears
  // also read every activation once a pass to quantise it (inside their ops, which the dry step
  // counts as GEMMs). (The activations' bytes written and read once a pass, which this replaced,
  // charged the forward 2.2-4.3x the bytes its elementwise ops are given: round 69.)
  const double fp8_quantisation = w.fp8 ? p_none.activation_bytes / s.samples_per_mb / r.memory : 0.0;
  const double per_sample = 1.0 / s.samples_per_mb;
  const double elementwise_fwd = per_sample * elementwise_seconds(hw, r, elementwise.fwd) + fp8_quantisation;
  const double elementwise_bwd = per_sample * elementwise_seconds(hw, r, elementwise.bwd) + fp8_quantisation;
  // Attention forward + backward: the FLOPs of the tiles the kernels compute at the rate (each
  // tile as the full tile's pairs that cost what it does: computed_attention), their
  // per-pair work, and the masked tiles' mask rule per pair (a dense tile's (pair, head) at
  // head dim 16 times the file's masked ratio less one), split by the forward's share measured
  // at the trunk's head dim (the tiny decks' 16: 0.36-0.39 here, where the share at 64, 0.32-0.33,
  // had their 1-rank forward 8-16 % low and their backward within 5 %; round 63).
  const ComputedAttention tiled =
      computed_attention(c, s.samples_per_mb, w.sample, {hw.attention_tile_rows, hw.attention_tile_keys});
  const double pair_head = hw.attention_pair_head_s / r.share;
  const double masked_extra = (hw.attention_masked_tile_ratio - 1) * (pair_head + 14.0 * 16 / r.attention);
  const double attn = 3.5 * tiled.flops_fwd / r.attention + tiled.pair_heads * pair_head +
                      tiled.masked_pair_heads * masked_extra;
  const double attn_fwd = attention_forward_fraction(hw, double(c.d_model) / c.n_heads) * attn;
  // Dropout draws every element's keep word in the forward and again in the backward.
  const double dropout_draws = p.dropout_elements * hw.dropout_element_s / r.share;
  // The activations the linears fuse: their arithmetic per element (tiny_wan's GELU-tanh, 2.2 and
  // 3.0 ns an element forward and backward here, was 5 % of its step, in no term before).
  double activation_fwd = 0, activation_bwd = 0;
  for (const auto& [act, elements] : p.activated_per_sample) {
    const auto cost = hw.activation_element_s.find(act);
    if (cost == hw.activation_element_s.end()) continue;
    activation_fwd += elements * cost->second.forward_s / r.share;
    activation_bwd += elements * cost->second.backward_s / r.share;
  }
  // The weights' traffic a micro-batch makes beyond GEMM rates measured on cached weights, per
  // sample: every parameter read in the forward, and in the backward read again with the
  // trained ones' gradients read and written (the compute copies: fp32 on a CPU); none while
  // the rank's working set fits its share of the last-level cache.
  double weights_fwd = 0, weights_bwd = 0;
  const double param_bytes = planned_blocks_dtype(hw, c) == DType::bf16 ? 2 : 4;
  const double weight_bytes = param_bytes * double(p.n_params), grad_bytes = 4.0 * double(p.trainable_params);
  if (hw.gemm_rate_on_cached_weights && weight_bytes + grad_bytes + p_none.activation_bytes > cache_per_rank(hw, w)) {
    weights_fwd = weight_bytes / s.samples_per_mb / r.memory;
    weights_bwd = weights_fwd + 2 * grad_bytes / s.samples_per_mb / r.memory;
  }
  s.weight_traffic_s = (weights_fwd + weights_bwd) * s.samples_per_rank;
  s.elementwise_bytes_fwd = elementwise.fwd.bytes * per_sample * s.samples_per_rank;
  s.elementwise_bytes_bwd = elementwise.bwd.bytes * per_sample * s.samples_per_rank;
  // Each GEMM call's set-up, as gemm_call_rows more rows at the model width's rate, per
  // micro-batch: the dry step's GEMMs by pass (the backward's with recompute's forward). A
  // micro-batch of 2 tiny_gr00t samples (26 action rows) ran its GEMMs at 0.81 of the 512-row rate.
  const double gemm_calls_fwd = per_sample * hw.gemm_call_rows * elementwise.fwd.gemm_row_flops / r.gemm;
  const double gemm_calls_bwd = per_sample * hw.gemm_call_rows * elementwise.bwd.gemm_row_flops / r.gemm;
  SampleSeconds t;
  const double gemm_fwd = gemm_forward_seconds(hw, w, r, p);
  t.fwd = {gemm_fwd + gemm_calls_fwd + weights_fwd + activation_fwd, attn_fwd,
           dropout_draws + p.dropout_bytes_fwd / r.memory, elementwise_fwd, 0};
  t.bwd = {2 * gemm_fwd + gemm_calls_bwd + weights_bwd + activation_bwd, attn - attn_fwd,
           dropout_draws + p.dropout_bytes_bwd / r.memory, elementwise_bwd, 0};
  s.flops_per_sample = p.flops_fwd + p.flops_bwd;
  s.recompute_flops_per_sample = recompute_flops(c, p);
  if (c.recompute == Recompute::full)  // the dry step's backward has its elementwise ops and GEMM calls
    t.recompute = t.fwd, t.recompute.elementwise = 0, t.recompute.gemm -= gemm_calls_fwd;
  if (c.recompute == Recompute::selective)
    t.recompute.gemm = (s.recompute_flops_per_sample - p.attn_flops_fwd) / r.gemm, t.recompute.attention = attn_fwd;
  return t;
}

// The rank's own compute: its samples' forward, backward and recompute.
void add_compute(const SampleSeconds& t, StepPrediction& s) {
  s.fwd_s = t.fwd.total() * s.samples_per_rank;
  s.bwd_s = t.bwd.total() * s.samples_per_rank;
  s.recompute_s = t.recompute.total() * s.samples_per_rank;
  s.fwd_kinds = t.fwd.scaled(s.samples_per_rank);
  s.bwd_kinds = t.bwd.plus(t.recompute).scaled(s.samples_per_rank);
  s.compute_s = s.fwd_s + s.bwd_s + s.recompute_s;
}

// A rank's micro-batches and compute, and what the rest of the step is costed from: the
// micro-batch's plan, the rank's rates, a sample's seconds.
struct RankCompute {
  PlanReport plan;
  RankRates rates;
  SampleSeconds per_sample;
  ElementwiseWork micro_batch_ops;  // a micro-batch's dry step: its elementwise work and op calls
};

RankCompute rank_compute(const Hardware& hw, const Workload& w, StepPrediction& s) {
  size_micro_batches(w, s);
  const DType blocks = planned_blocks_dtype(hw, w.model);
  RankCompute rc{make_plan(w.model, w.ranks, s.tokens_per_mb, w.sample, blocks, w.sharding()), rank_rates(hw, w),
                 {}, {}};
  ModelConfig kept = w.model;
  kept.recompute = Recompute::none;
  const PlanReport p_none = make_plan(kept, w.ranks, s.tokens_per_mb, w.sample, blocks, kNoState);
  const std::shared_ptr<const ElementwiseFit> fit =
      w.elementwise ? w.elementwise : model_elementwise_work(hw, w);
  EMB_ASSERT(fit->recompute == w.model.recompute);
  rc.micro_batch_ops = fit->micro_batch(s.samples_per_mb);
  rc.per_sample = sample_seconds(hw, w, rc.rates, rc.plan, p_none, rc.micro_batch_ops, s);
  add_compute(rc.per_sample, s);
  return rc;
}

// Packed samples differ in context length, so each step the ranks' compute differs with the
// tokens their samples drew (regression/plan_validation.md round 29: at 2 ranks the tiny decks'
// ranks ended their backward 0.7 ms apart packed, 0.5 padded to equal samples). A rank's n
// samples each one standard deviation longer cost Δ more; n independent draws spread its
// compute by Δ/√n.
void add_data_spread(const Hardware& hw, const Workload& w, StepPrediction& s) {
  if (w.ranks < 2 || !w.packing || w.sample.context_tokens_std <= 0) return;
  Workload longer = w;
  longer.sample.context_tokens = w.sample.context_tokens + std::llround(w.sample.context_tokens_std);
  longer.sample.context_tokens_std = 0;
  StepPrediction l;
  rank_compute(hw, longer, l);
  s.data_spread_s = std::max(0.0, l.compute_s - s.compute_s) / std::sqrt(double(s.samples_per_rank));
}

// One collective's seconds per bucket, and the core seconds it takes from the rank's compute
// when it runs under it on a core the rank computes on (no core to spare): the bytes a rank
// sends at the hardware's core seconds per byte, and its call's (comm_core_cost(hw, R): measured
// at their count for ranks time-sharing cores), or at one rank the copy itself.
struct BucketTimes {
  std::vector<double> seconds, core;
};

double sent_bytes(Collective op, double bytes, int R) {
  return (op == Collective::all_reduce ? 2.0 : 1.0) * double(R - 1) / R * bytes;
}

// A pass over the buckets: `before` issued ahead of each bucket's compute, `after` behind it.
// Overlapping, the exposed seconds are what pass_exposed finds uncovered; on a shared core the
// covered share of the collectives' core seconds slows the pass's compute (`core`, added to
// it). Not overlapping, every collective is a wait, which holds its core seconds. The issuing
// rank's share of the uncovered seconds (Issuer) is its compute, not a wait, but for the hand-off
// it still waits after its phase.
struct PassTime {
  double exposed = 0, core = 0;
  double partner_polls = 0;  // half of it in exposed, half in core (split_uncovered)
};

// Collectives of `total` seconds (`core` of them on a shared core) of which `uncovered` are left
// uncovered by the compute: the covered share of the core seconds is compute, and of the
// uncovered seconds the issuing rank's share.
// Ranks time-sharing a core close a pass apart: the first to end it issues the closing
// collective and its progress thread polls for the partners, on their core, while they compute
// (`partner_polls`: the k-1 early ranks' calls at the core seconds per call measured at that
// count). The last partner ends that much later; over the k ranks half of it is their passes'
// (the j-th to end slowed by the j-1 before it) and half their wait for the last.
// Session 29: at 4 ranks on 2 cores all three decks' backward 0.8 ms over --plan and their
// exposed comm 0.3-1.6 over, each closed by one reduce-scatter; the probe's calls 0.4-1.7 ms.
// The last rank to issue an uncovered collective: its share of the ranks (`share`), and the
// seconds of it the rank still waits after the phase that issued it (`wait`).
struct Issuer {
  double share = 0, wait = 0;
};

PassTime split_uncovered(double total, double core, double uncovered, bool shared_core, const Issuer& issuer,
                         double partner_polls) {
  const double covered = shared_core && total > 0 ? core * std::max(0.0, 1 - uncovered / total) : 0.0;
  const double polls = uncovered > 0 ? partner_polls : 0.0;
  const double issuer_wait = std::min(uncovered, issuer.wait);
  return {uncovered * (1 - issuer.share) + issuer_wait * issuer.share + polls / 2,
          covered + (uncovered - issuer_wait) * issuer.share + polls / 2, polls};
}

PassTime pass_time(const std::vector<double>& comp, const BucketTimes& before, const BucketTimes& after,
                   bool prefetch_all, bool overlap, bool shared_core, const Issuer& issuer, double partner_polls) {
  double total = 0, core = 0;
  for (size_t k = 0; k < comp.size(); ++k)
    total += before.seconds[k] + after.seconds[k], core += before.core[k] + after.core[k];
  if (!overlap) return {total, 0};
  return split_uncovered(total, core, pass_exposed(comp, before.seconds, after.seconds, prefetch_all), shared_core,
                         issuer, partner_polls);
}

BucketTimes reversed(BucketTimes t) {
  std::reverse(t.seconds.begin(), t.seconds.end());
  std::reverse(t.core.begin(), t.core.end());
  return t;
}

// Every collective of the step, bucket by bucket (their total), what the unit overlap schedule
// leaves exposed, and on a shared core what the covered collectives add to the forward and
// backward.
void add_communication(const Hardware& hw, const Workload& w, const PlanReport& p, const SampleSeconds& t,
                       const ShardLayout& layout, StepPrediction& s) {
  const ModelConfig& c = w.model;
  const int R = w.ranks;
  const std::vector<BucketCalls> buckets = bucket_calls(layout);
  s.buckets = int(buckets.size());
  const size_t B = buckets.size();
  const double N = double(p.n_params), param_bytes = c.precision == Precision::bf16 ? 2 : 4;
  const ShardMode mode = w.shard;
  const CommCoreCost core_cost = comm_core_cost(hw, R);
  // Each bucket's collective seconds: the sum of its calls (`calls` picks which, BucketCalls).
  auto times = [&](Collective op, std::vector<double> BucketCalls::*calls, double bytes_per_param, const char* what,
                   int per_step) {
    BucketTimes bt;
    CollectiveCost cost{what, op, 0, 0, per_step, "", 0};
    for (const BucketCalls& k : buckets) {
      double seconds = 0, core = 0;
      for (double n : k.*calls) {
        const CollectiveTime ct = collective_time(hw, op, n * bytes_per_param, R);
        seconds += ct.seconds;
        core += R == 1 ? ct.seconds : sent_bytes(op, n * bytes_per_param, R) * core_cost.per_byte + core_cost.per_call;
        cost.bytes += n * bytes_per_param;
        cost.algorithm = ct.algorithm;
        ++cost.buckets;
      }
      bt.seconds.push_back(seconds), bt.core.push_back(core);
      cost.seconds += seconds * per_step;
    }
    s.collectives.push_back(cost);
    s.comm_total_s += cost.seconds;
    return bt;
  };
  const double mb_fwd = t.fwd.total() * s.samples_per_mb, mb_bwd = (t.bwd.total() + t.recompute.total()) * s.samples_per_mb;
  std::vector<double> fwd_comp(B), bwd_comp(B);
  for (size_t k = 0; k < B; ++k) {
    fwd_comp[k] = mb_fwd * buckets[k].params / N;
    bwd_comp[B - 1 - k] = mb_bwd * buckets[k].params / N;  // backward runs the buckets in reverse
  }
  const BucketTimes zero{std::vector<double>(B, 0.0), std::vector<double>(B, 0.0)};
  // A CPU without a core to spare overlaps only where the progress thread's cost is measured, or
  // at one rank, whose collectives are copies of its own (their seconds its core's: `core`
  // above; round 52, a 1-rank file: scaling_cpu's 5 ms of copies predicted a wait, timed in
  // `other` and the passes).
  const bool shared_core = !hw.comm_overlaps_compute && (core_cost.per_byte > 0 || R == 1);
  const bool overlap = w.overlap && (hw.comm_overlaps_compute || shared_core);
  // A rank's core, its own or time-shared, is shared with its progress thread (at a higher
  // priority): the last rank to issue a collective the others already wait in runs its part at
  // once on its core, inside the phase that issued it, and does not wait; the others wait for
  // it. Over the ranks, 1/R of an uncovered collective is compute and the rest a wait: one
  // rank's copies all compute (round 23: at 1 rank scaling_cpu's last copy inside its backward,
  // none of it exposed; at 2 the late rank's bwd 3 ms longer and its wait 0, the early rank's
  // wait 3.2 ms; session 20, ranks time-sharing one core: 2 ranks' last reduce-scatter, 8.9 ms
  // entering together, ended 3.5 ms after the late rank's backward, which ran on 0-16 ms past
  // its issue, median 2.3). It still waits for its last call's hand-off from the progress thread,
  // the core seconds a call takes (session 31, traced at 2 ranks: the closing reduce-scatter
  // ended 0.18 ms after the late rank's backward, median, on tiny_wan, 0.8 MB, as on
  // scaling_cpu, 17.5 MB; the probe's call 0.15-0.18 ms). One rank's copies wait for no one.
  const Issuer issuer{shared_core && overlap ? 1.0 / R : 0.0, R > 1 ? core_cost.per_call : 0.0};
  const double partner_polls = shared_core && overlap && ranks_time_share_cores(hw, R)
                                   ? (ranks_a_core(hw, R) - 1) * core_cost.per_call
                                   : 0.0;
  auto fwd_pass = [&](const BucketTimes& before, const BucketTimes& after, bool prefetch_all, int times_per_step) {
    const PassTime pt =
        pass_time(fwd_comp, before, after, prefetch_all, overlap, shared_core, issuer, partner_polls);
    s.comm_exposed_s += times_per_step * pt.exposed, s.comm_core_fwd_s += times_per_step * pt.core;
    s.partner_polls_s += times_per_step * pt.partner_polls;
  };
  auto bwd_pass = [&](const BucketTimes& before, const BucketTimes& after, int times_per_step) {
    const PassTime pt = pass_time(bwd_comp, before, after, false, overlap, shared_core, issuer, partner_polls);
    s.comm_exposed_s += times_per_step * pt.exposed, s.comm_core_bwd_s += times_per_step * pt.core;
    s.partner_polls_s += times_per_step * pt.partner_polls;
  };
  // A micro-batch's reductions that are not the step's last drain under the next micro-batch (a
  // gradient slot holds them until their bucket's next backward): exposed where they outlast it.
  // They start as its forward does, so their core seconds slow the forward first and the
  // backward only with what outlasts the forward (charged pro rata to the passes' compute, the
  // forward got a third of them: at 2 ranks scaling_cpu's ZeRO-3 forward ran 4.8 ms over DDP's,
  // --plan's 1.5 ms of the reduce-scatter's 4.5 core ms; session 31).
  auto drained_pass = [&](const BucketTimes& after, int times_per_step) {
    double total = 0, core = 0;
    for (size_t k = 0; k < B; ++k) total += after.seconds[k], core += after.core[k];
    const PassTime pt = overlap ? split_uncovered(total, core, std::max(0.0, total - (mb_fwd + mb_bwd)), shared_core,
                                                  issuer, partner_polls)
                                : PassTime{total, 0};
    s.comm_exposed_s += times_per_step * pt.exposed;
    s.partner_polls_s += times_per_step * pt.partner_polls;
    const double in_forward = total > mb_fwd ? mb_fwd / total : 1.0;
    s.comm_core_fwd_s += times_per_step * pt.core * in_forward;
    s.comm_core_bwd_s += times_per_step * pt.core * (1 - in_forward);
  };
  // ZeRO-3's first kPrefetchDepth buckets are gathered by publish_params behind the previous
  // step's update. With MPI's progress thread on the ranks' cores they run under the step's
  // head, whose blocking host reductions wait for the transfer (`other`, not a wait for the
  // gather: regression/plan_validation.md round 23), and are ready when the forward starts.
  auto gathered_at_head = [&](BucketTimes g) {
    if (!(shared_core && overlap)) return g;
    for (size_t k = 0; k < std::min(B, size_t(kPrefetchDepth)); ++k) {
      s.comm_head_s += g.seconds[k], s.comm_head_core_s += g.core[k], s.head_gathers += int(buckets[k].pieces.size());
      g.seconds[k] = 0, g.core[k] = 0;
    }
    return g;
  };
  const auto pieces = &BucketCalls::pieces, trained = &BucketCalls::trained_pieces;
  if (mode == ShardMode::full && int(B) <= kGatherSlots) {  // ZeRO-3, every bucket held: one gather per step
    const BucketTimes held =
        times(Collective::all_gather, pieces, param_bytes, "all_gather of parameters, held for the step", 1);
    fwd_pass(gathered_at_head(held), zero, false, 1);
    const BucketTimes rs =
        reversed(times(Collective::reduce_scatter, trained, 4, "reduce_scatter of gradients", s.micro_batches));
    bwd_pass(zero, rs, 1);
    drained_pass(rs, s.micro_batches - 1);
  } else if (mode == ShardMode::full) {  // ZeRO-3: gathers in forward and backward, reductions per micro-batch
    const int mbs = s.micro_batches;
    const BucketTimes g_fwd =
        times(Collective::all_gather, pieces, param_bytes, "forward all_gather of parameters", mbs);
    const BucketTimes g_bwd =
        times(Collective::all_gather, pieces, param_bytes, "backward all_gather of parameters", mbs);
    const BucketTimes rs = times(Collective::reduce_scatter, trained, 4, "reduce_scatter of gradients", mbs);
    fwd_pass(gathered_at_head(g_fwd), zero, false, 1);
    fwd_pass(g_fwd, zero, false, s.micro_batches - 1);
    bwd_pass(reversed(g_bwd), reversed(rs), s.micro_batches);
  } else if (mode == ShardMode::grads) {  // ZeRO-2: reductions in the last backward, gathers after the update
    bwd_pass(zero, reversed(times(Collective::reduce_scatter, trained, 4, "reduce_scatter of gradients", 1)), 1);
    // The update changes the trained pieces only: the frozen ones' copies were gathered at the start.
    fwd_pass(times(Collective::all_gather, trained, param_bytes, "all_gather of updated parameters", 1), zero, true, 1);
  } else {  // DDP: all-reduce in the last backward
    bwd_pass(zero, reversed(times(Collective::all_reduce, trained, 4, "all_reduce of gradients", 1)), 1);
  }
}

// k ranks time-sharing a core leave the step's head in the scheduler's turns, each at a full
// core in its turns: the rank that holds the core as the head's reductions end runs a first turn
// (what it has left of its slice: the hardware's first_turn_s ± first_turn_spread_s, 1.6-5.8 ms
// here), each partner then a turn in order (turn_s: 4.0 ms) while the ones not yet run wait in
// the head, and round again. A rank's forward starts with its first turn and ends where its
// turns have given it a full core's forward; the core is busy throughout, so what the head waits
// and the forward's turns change moves between the head, the forward and the backward, and the
// step is the paced passes'. Round 62's traces, the tiny decks at 4 ranks on one core: the
// first turn 2.2-2.5 / 3.1-3.5 / 4.2-4.5 ms (quartiles), the later ones 4.0, each later rank's
// forward a full core's 3.3-3.5 ms, the first rank's 15.1-16.2 (F + 3 turns) in the 52-60 % of
// steps whose first turn ended short of it: a knife edge, so the turns are averaged over the
// first turn's spread. Paced at a quarter of the core each after the first turn they were 2x the
// 5.1-5.9 ms measured (regression/plan_validation.md session 21). Only the step's first
// micro-batch leaves the head.
struct HeadTurns {
  double head_wait = 0;       // the ranks' mean wait in the head for their first turn
  double forward_change = 0;  // the ranks' mean forward less the paced one (k full-core forwards)
};

// k ranks' turns after a first turn of `first_turn` seconds, later ones of `turn`, each rank's
// micro-batch `work` seconds at a full core of which `fwd` its forward.
HeadTurns turns_after_head(int k, double first_turn, double turn, double fwd, double work) {
  std::vector<double> ran(size_t(k), 0), start(size_t(k), -1), fwd_end(size_t(k), -1);
  double now = 0;
  // Turns in order until every forward has ended; a rank whose micro-batch ended has left the
  // core for the collective that closes it (its forward ended before).
  for (int t = 0, forwards_left = k; forwards_left > 0; ++t) {
    const size_t r = size_t(t % k);
    if (ran[r] >= work) continue;
    if (start[r] < 0) start[r] = now;
    const double run = std::min(t == 0 ? first_turn : turn, work - ran[r]);
    if (fwd_end[r] < 0 && ran[r] + run >= fwd) fwd_end[r] = now + (fwd - ran[r]), --forwards_left;
    ran[r] += run, now += run;
  }
  HeadTurns h;
  for (size_t r = 0; r < size_t(k); ++r) h.head_wait += start[r] / k, h.forward_change += (fwd_end[r] - start[r]) / k;
  h.forward_change -= fwd * k;
  return h;
}

// The turns averaged over a step's first turn, uniform over the hardware's median ± spread.
HeadTurns head_turns(const Hardware& hw, const StepPrediction& s) {
  const double share = device_share(hw, s.w.ranks);
  if (!hw.ranks_share_node || share >= 1 || hw.first_turn_s <= 0 || hw.turn_s <= 0) return {};
  const int k = std::max(2, int(std::lround(ranks_a_core(hw, s.w.ranks))));
  const double per_mb = share / s.micro_batches;             // a micro-batch at a full core
  const double fwd = s.fwd_s * per_mb, work = fwd + (s.bwd_s + s.recompute_s) * per_mb;
  if (work <= 0) return {};
  constexpr int kPoints = 16;
  HeadTurns mean;
  for (int i = 0; i < kPoints; ++i) {
    const double first = hw.first_turn_s + hw.first_turn_spread_s * (2 * (i + 0.5) / kPoints - 1);
    const HeadTurns h = turns_after_head(k, std::max(0.0, first), hw.turn_s, fwd, work);
    mean.head_wait += h.head_wait / kPoints, mean.forward_change += h.forward_change / kPoints;
  }
  return mean;
}

// With more than one rank every rank waits for the slowest at each of the step's synchronisations
// (the blocking host reductions, each collective's wait): the hardware's rank_imbalance, measured
// with M ranks, scaled to R ranks as the expected maximum of R ranks' independent delays (1.8
// times 2 ranks' at 4). Ranks drift apart in proportion to the work between two meetings
// (round 26: a per-synchronisation charge gave the tiny decks at 2 ranks 0.6-0.7 ms where their
// steps' rest was 0.3), so over a step rank_imbalance of the compute. Ranks on cores of their
// own wait for it at every synchronisation, the head's host reductions included. Ranks
// time-sharing cores (more than the node's cores) wait for it in the collectives: the head
// follows the close with little work between, and there the partner waiting for the first turn
// (HeadTurns) is the wait. Session 18, 4 ranks on 2 cores: the closing collective's wait beyond
// the collective grows with the work before it (tiny_wan 0.7 ms after ~17 ms of compute,
// scaling_cpu ~4 after ~170; tiny_gr00t's exposed comm at global batch 16 to 256, 1 to 7
// micro-batches, 1.3 to 5.3 ms), where a charge per meeting (the probe's wait per round) had it
// 2x high on the tiny decks and low on scaling_cpu. The
// step's head is one meeting: its host reductions follow one another with no work between and
// its first gathers are waited in them (session 16, timed at each: the first reduction 0.01 ms,
// the second 1.4-1.8); the tail's follow the collective that closes the backward, the ranks just
// met there (0.08-0.1 ms each).
// It is part of compute_s, timed where the ranks wait: `other` at host reductions, exposed comm
// in collectives.
void add_imbalance(const Hardware& hw, int R, StepPrediction& s) {
  const HeadTurns turns = head_turns(hw, s);
  s.head_turn_wait_s = turns.head_wait, s.head_turn_forward_change_s = turns.forward_change;
  const int measured_ranks = hw.rank_imbalance_ranks > 0 ? hw.rank_imbalance_ranks : hw.devices_per_node;
  if (R < 2 || measured_ranks < 2) return;
  const double scale = hw.rank_imbalance * expected_max_of_normals(R) / expected_max_of_normals(measured_ranks);
  const StepCalls calls;
  int collective_waits = -s.head_gathers;  // the first gathers are waited at the head
  for (const CollectiveCost& c : s.collectives) collective_waits += c.buckets * c.per_step;
  const bool time_sharing = ranks_time_share_cores(hw, R);
  // The timing's wait at the head (`other`, where the first gathers wait too) and in the
  // collectives after it (exposed comm).
  const double timing = scale * s.compute_s;
  const double in_collectives =
      time_sharing ? (collective_waits > 0 ? timing : 0.0)
                   : timing * collective_waits / (calls.host_reductions + s.head_gathers + collective_waits);
  const double at_head = timing - in_collectives;
  // The samples' spread (add_data_spread): ranks time-sharing a core finish as their core's
  // summed work does (k ranks a core spread by 1/√k of one rank's) and the wait is for the
  // slowest core. The ranks' timing moves the cores too: traced at 4 ranks on 2 cores (session
  // 35), the partners on a core ended their backward 0.06-0.09 ms apart on the tiny decks and
  // 0.5-1.0 on scaling_cpu, the cores 0.25-0.45 and 2.7-3.8 ms from the latest, past the
  // samples' 0.15-0.30 and 0.72 there: the timing the probe measures is mostly the cores' gap,
  // where it meets the samples'. Ranks on cores of their own each spread by both at once. Either
  // way the two spreads are independent and add in quadrature, and so do the expected waits for
  // the slowest. (Added, as they were before, the 4-rank tiny decks' exposed comm came out
  // 0.2-0.3 ms high in every one of rounds 101-103.)
  const double data = s.data_spread_s / std::sqrt(ranks_a_core(hw, R)) *
                      expected_max_of_normals(time_sharing ? hw.devices_per_node : R);
  s.imbalance_s = std::hypot(timing, data);
  s.compute_s += s.imbalance_s;
  // Each wait is timed where the ranks wait. The samples' spread builds in the passes and is
  // waited in the collective that closes the backward; the whole wait is split as the two
  // spreads' variances (ranks time-sharing cores: all of it in the collectives).
  const double variance = timing * timing + data * data;
  s.imbalance_in_collectives_s =
      variance > 0 ? s.imbalance_s * (timing * in_collectives + data * data) / variance : 0.0;
  // The step's head waits for the slowest rank, for the partners' first turn and for the first
  // gathers at once (round 24: at 4 ranks scaling_cpu's `other` over-predicted by their sum;
  // session 17: the tiny decks' by the gathers beside the turn): the overlap is no time of its
  // own. Ranks on cores of their own meet there at the head's host reductions, of all its waits.
  const double head_overlap =
      s.head_turn_wait_s +
      (time_sharing ? at_head : at_head * calls.head_host_reductions / (calls.host_reductions + s.head_gathers));
  s.comm_head_s -= std::min(s.comm_head_s, head_overlap);
}

// Seconds of one of the step's blocking host reductions at R ranks. A sum of a few doubles is
// latency-bound: MPI's small all-reduce runs by recursive doubling, ⌈log2 R⌉ rounds of one
// exchange each, and NCCL's small one by trees of the same depth. The rounds inside a node cost
// what the hardware's sync_s, measured with a node's ranks (hwprobe runs one a device or core),
// gives each of its rounds; each round across nodes costs the fabric's latency. (Scaled by
// 2(R-1) ring hops instead, GR00T's 1024-rank anchor charged 2.9 ms a reduction, 11.7 ms of an
// 82 ms step.)
// A file without sync_s, and ranks time-sharing cores where the file measured their link
// (time_sharing_link, whose hops are such an exchange at that count: 2 ranks on one core ~1.1
// ms a hop, each waiting for the partner's turn; 4 on it 0.01; round 48): the all-reduce of 32
// bytes on the links.
double host_reduction_seconds(const Hardware& hw, int R) {
  if (R < 2) return 0;
  if (hw.fixed.sync_s <= 0 || (ranks_time_share_cores(hw, R) && time_sharing_link_measured(hw)))
    return collective_time(hw, Collective::all_reduce, 32, R).seconds;
  const auto rounds = [](int ranks) { return std::ceil(std::log2(double(std::max(1, ranks)))); };
  const int per_node = hw.ranks_share_node ? R : std::min(R, hw.devices_per_node);
  const int nodes = (R + per_node - 1) / per_node;
  const double per_round_in_node = hw.fixed.sync_s / rounds(std::max(2, hw.devices_per_node));
  return per_round_in_node * rounds(per_node) + rounds(nodes) * hw.inter_node.latency_s;
}

// What no FLOP or byte accounts for: op calls, allocations, the flow noise's draws (host work of
// the forward, outside every op: model/flow_matching.hpp), synchronisations, kernel launches.
// The host's work is a rank's like its compute: ranks sharing a CPU node's cores share its time.
// On a CPU it falls where its calls are: each pass's op calls and their allocations in the pass,
// the noise in the forward, the optimizer's calls in the optimizer.
void add_fixed_costs(const Hardware& hw, const Workload& w, const RankCompute& rc, const ShardLayout& layout,
                     StepPrediction& s) {
  const StepCalls calls = step_calls(rc.micro_batch_ops, int64_t(layout.decay_segments().size()),
                                     int64_t(layout.trainable_runs().size()));
  const double call_s = hw.fixed.op_call_s / rc.rates.share, allocation_s = hw.fixed.allocation_s / rc.rates.share;
  FixedCostPrediction& f = s.fixed;
  f.op_calls = calls.op_calls_per_micro_batch() * s.micro_batches + calls.optimizer_op_calls;
  f.allocations = calls.allocations_per_micro_batch * s.micro_batches;
  f.syncs = calls.host_reductions;
  f.op_calls_s = double(f.op_calls) * call_s;
  f.allocations_s = double(f.allocations) * allocation_s;
  // A sample's draws do not depend on what it is packed with.
  f.noise_draws = flow_noise_draws(w.model, *plan_batch(w.model, 1, w.sample)) * s.samples_per_rank;
  f.noise_draws_s = double(f.noise_draws) * hw.fixed.noise_draw_s / rc.rates.share;
  f.syncs_s = f.syncs * host_reduction_seconds(hw, w.ranks);
  if (hw.fixed.gpu()) {
    f.launches = f.op_calls;
    f.launches_s = double(f.launches) * (w.cuda_graphs ? hw.fixed.graph_kernel_launch_s : hw.fixed.kernel_launch_s);
  }
  // A GPU's host runs ahead of its stream: host work shows where it outlasts the device's.
  const double host = f.op_calls_s + f.allocations_s + f.noise_draws_s + f.launches_s;
  f.total_s = (hw.fixed.gpu() ? std::max(0.0, host - s.compute_s) : host) + f.syncs_s;
  if (hw.fixed.gpu()) return;
  const auto pass_host = [&](int64_t calls_per_micro_batch) {
    return double(calls_per_micro_batch * s.micro_batches) * (call_s + double(kAllocationsPerOpCall) * allocation_s);
  };
  f.forward_host_s = pass_host(calls.forward_op_calls_per_micro_batch) + f.noise_draws_s;
  f.backward_host_s = pass_host(calls.backward_op_calls_per_micro_batch);
  f.optimizer_host_s = double(calls.optimizer_op_calls) * call_s;
}

// The optimizer's step over the owned shard, then the data: the loader reads ahead, so storage
// only shows when it is slower than the step, and so does its host work on a GPU node's spare
// cores; a CPU rank's core does the loader's work as well as the step's.
void add_optimizer_and_data(const Hardware& hw, const Workload& w, const PlanReport& p, const RankRates& r,
                            StepPrediction& s) {
  // The optimizer phase (train_step) runs over the trained elements only: the gradients' Σg²,
  // then AdamW; at the file's seconds per element and core (over the rank's share of them for
  // memory-bound work: the phase streams its arrays) where it has one, else its bytes (read g
  // twice, p, m, v; write p, m, v) at the memory rate (the triad's rate predicted twice the
  // CPU's phase). The bf16 copy, rounded from every owned element, is publish_params' after the
  // phase: `other`.
  const double shards = w.shard == ShardMode::none ? 1 : w.ranks;
  const double trained = double(p.trainable_params) / shards, owned = double(p.n_params) / shards;
  s.optimizer_s = hw.optimizer_element_s > 0 ? trained * hw.optimizer_element_s / r.memory_share
                                             : trained * (16 + 12 + 4) / r.memory;
  s.bf16_round_s = owned * (w.model.precision == Precision::bf16 ? 2 : 0) / r.memory;
  const GradientTraffic g = gradient_traffic(w.shard, double(p.n_params), double(p.n_params - p.trainable_params),
                                             w.ranks, s.buckets, s.micro_batches, cache_per_rank(hw, w));
  s.gradient_backward_s = g.backward_bytes / r.memory;
  s.elementwise_bytes_bwd += g.backward_bytes;  // the data-parallel layer's zero and add ops, in the pass
  s.gradient_step_s = g.step_bytes / r.memory;
  s.step_s = s.compute_s + s.comm_core_fwd_s + s.comm_core_bwd_s + s.comm_exposed_s + s.comm_head_s + s.optimizer_s +
             s.bf16_round_s + s.fixed.total_s + s.gradient_backward_s + s.gradient_step_s;
  s.data_bytes_per_sample = data_bytes_per_sample(w.model, p);
  const double node_bytes = s.data_bytes_per_sample * s.samples_per_rank * r.per_node;
  const double read_s = node_bytes / hw.storage_read_per_node;
  if (hw.ranks_share_node) {
    // The loader's work is the rank's core's: on demand (data.prefetch's auto on a CPU) inside
    // the step's data_wait, and a prefetch thread sharing the core, woken as the step takes its
    // batch, runs at once and the step waits for it (round 33: the thread's 0.13-0.15 ms runs
    // inside each step's data_wait of 0.15 at 1 rank on tiny_gr00t).
    s.loader_s = w.loader_s / r.share;
    // The step's first gathers run under the head (gathered_at_head), their progress thread on the
    // loader's core at a raised priority: the loader has half the core while their core seconds
    // last (session 28, 2 ranks: data_wait 0.10 / 0.26 ms on tiny_wan / tiny_gr00t, the loader
    // alone 0.05 / 0.12; the head's wait for the gathers as before).
    s.loader_beside_gathers_s = std::min(s.loader_s, s.comm_head_core_s);
    s.data_wait_s = s.loader_s + s.loader_beside_gathers_s + std::max(0.0, read_s - s.step_s);
  } else {
    s.loader_s = w.loader_s;
    s.data_wait_s = std::max(0.0, std::max(read_s, s.loader_s) - s.step_s);
  }
  s.step_s += s.data_wait_s;
  s.data_bytes_per_s_per_node = node_bytes / s.step_s;
}

// The step divided as the trainer times it. The host time of the op calls, allocations and noise
// draws runs where they are made (add_fixed_costs; on a GPU the host's excess over the stream is
// `other`);
// a rank times its own compute, and waits for the slowest rank where it synchronises: the
// imbalance is `other` at the blocking host reductions, exposed comm in the collectives' waits.
// The gradient buffers' passes run in the backward and, begin_step's and finish_gradients',
// outside the passes (`other`), as the bf16 copy's rounding.
void add_phases(StepPrediction& s) {
  const FixedCostPrediction& f = s.fixed;
  PhasePrediction& ph = s.phases;
  ph.data_wait = s.data_wait_s;
  s.fwd_kinds.host = f.forward_host_s, s.bwd_kinds.host = f.backward_host_s;
  s.bwd_kinds.elementwise += s.gradient_backward_s;  // the gradient buffers' zero and add ops run in it
  ph.fwd = s.fwd_s + s.comm_core_fwd_s + s.fwd_kinds.host;
  ph.bwd = s.bwd_s + s.recompute_s + s.comm_core_bwd_s + s.bwd_kinds.host + s.gradient_backward_s;
  ph.comm_exposed = s.comm_exposed_s + s.imbalance_in_collectives_s;
  // The gradient norm's host reduction is the optimizer's (train_step times it there), the
  // step's other host reductions `other`.
  const double norm_reduction = f.syncs > 0 ? f.syncs_s / f.syncs : 0.0;
  ph.optim = s.optimizer_s + f.optimizer_host_s + norm_reduction;
  ph.other = f.total_s - norm_reduction - f.forward_host_s - f.backward_host_s - f.optimizer_host_s + s.imbalance_s -
             s.imbalance_in_collectives_s + s.gradient_step_s + s.bf16_round_s + s.comm_head_s;
  // The ranks sharing a core leave the head in turns (HeadTurns, add_imbalance).
  ph.fwd += s.head_turn_forward_change_s;
  ph.bwd -= s.head_turn_forward_change_s + s.head_turn_wait_s;
  ph.other += s.head_turn_wait_s;
}

// Samples/s per device, MFU and the epoch.
void add_throughput(const Hardware& hw, const Workload& w, StepPrediction& s) {
  const int R = w.ranks;
  const double samples_per_step = double(std::min<int64_t>(w.global_batch, int64_t(s.samples_per_rank) * R));
  s.samples_per_s_per_device = samples_per_step / s.step_s / R;
  s.mfu = s.flops_per_sample * s.samples_per_s_per_device / peak_flops_per_rank(hw, w.model.precision == Precision::bf16, R);
  if (w.dataset_samples > 0) s.epoch_s = double(w.dataset_samples) / (samples_per_step / s.step_s);
}

void add_memory(const Hardware& hw, const Workload& w, const PlanReport& p, StepPrediction& s) {
  s.state_bytes = p.state(w.shard) + w.frozen_weight_bytes;
  s.activation_bytes = p.activation_bytes + w.context_activation_bytes_per_sample * s.samples_per_mb;
  s.reserved_bytes = hw.reserved_bytes;
  s.blas_workspace_bytes = hw.blas_workspace_bytes;
  s.comm_library_bytes = hw.comm_library_bytes;
  s.memory_bytes = s.state_bytes + s.activation_bytes + s.blas_workspace_bytes + s.comm_library_bytes + s.reserved_bytes;
  s.capacity_bytes = hw.ranks_share_node ? hw.memory_bytes / w.ranks : hw.memory_bytes;
  s.fits = s.memory_bytes <= s.capacity_bytes;
}

void add_checkpoint(const Hardware& hw, const PlanReport& p, StepPrediction& s) {
  // fp32 parameters, and AdamW's two moments of those trained.
  s.checkpoint_bytes = 4 * double(p.n_params) + 8 * double(p.trainable_params);
  s.checkpoint_s = s.checkpoint_bytes / std::min(s.nodes * hw.checkpoint_write_per_node, hw.checkpoint_write_total);
  // Time to finish the step in flight and write a checkpoint, twice over, and half a minute.
  s.preemption_signal_s = std::ceil(2 * (s.step_s + s.checkpoint_s) + 30);
}

}  // namespace

DType planned_blocks_dtype(const Hardware& hw, const ModelConfig& c) {
  return training_blocks_dtype(c, hw.activations_in_compute_precision);
}

std::shared_ptr<const ElementwiseFit> model_elementwise_work(const Hardware& hw, const Workload& w) {
  const bool mixed_storage = planned_blocks_dtype(hw, w.model) == DType::bf16;
  return std::make_shared<const ElementwiseFit>(fit_elementwise_work(w.model, w.sample, w.frozen, mixed_storage));
}

StepPrediction predict_step(const Hardware& hw, const Workload& w) {
  EMB_ASSERT(w.ranks >= 1 && w.global_batch >= 1);
  const PlanBatchScope batches;  // its several plans of the same samples build them once
  StepPrediction s;
  s.w = w;
  const RankCompute rc = rank_compute(hw, w, s);
  s.nodes = hw.ranks_share_node ? 1 : (w.ranks + hw.devices_per_node - 1) / hw.devices_per_node;
  add_data_spread(hw, w, s);
  // Rank 0's shards: its buckets, pieces and AdamW segments stand for every rank's.
  const std::unique_ptr<Model> model = make_model(w.model, nullptr);  // its parameter registry only
  const ShardLayout layout(model->params(), w.shard, 0, w.ranks, int64_t(w.bucket_bytes), w.frozen);
  add_communication(hw, w, rc.plan, rc.per_sample, layout, s);
  add_imbalance(hw, w.ranks, s);
  add_fixed_costs(hw, w, rc, layout, s);
  add_optimizer_and_data(hw, w, rc.plan, rc.rates, s);
  add_phases(s);
  add_throughput(hw, w, s);
  add_memory(hw, w, rc.plan, s);
  add_checkpoint(hw, rc.plan, s);
  return s;
}

}  // namespace emb
