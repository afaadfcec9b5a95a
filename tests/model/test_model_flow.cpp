// Flow-matching draws (MODEL.md "Flow", "Noise"): their distributions, and that a sample's
// draws depend only on (seed, step, sample id), never on its slot in the batch; gr00t's
// timestep buckets; dropout on in training only ("Dropout").
#define BOOST_TEST_MODULE model_flow
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <map>

#include "model/flow_matching.hpp"
#include "model/wan_schedule.hpp"
#include "model_fixture.hpp"

using namespace emb;
using namespace emb::test;

namespace {

FlowDraws draw(const ModelConfig& cfg, const PackedBatch& b, int64_t step) {
  TokenLayout layout;
  build_token_layout(cfg, b, layout);
  FlowDraws d;
  draw_flow(cfg, b, layout, step, kSeed, d);
  return d;
}

}  // namespace

// s ~ Beta(1.5, 1) has mean 0.6, so τ = (0.999 − s)/0.999 has mean 0.3994 (sd 0.2);
// tq = timestep_bucket(τ); noise ~ N(0, 1).
BOOST_AUTO_TEST_CASE(gr00t_timesteps_and_noise) {
  const ModelConfig cfg = preset_config("tiny_gr00t");
  const PackedBatch b = make_synthetic_batch(cfg, sample_ids(2000), true, kSeed);
  const FlowDraws d = draw(cfg, b, 5);
  double mean = 0, below_half = 0;
  for (int s = 0; s < b.n_samples; ++s) {
    const float tau = d.tau[size_t(s)];
    BOOST_TEST_REQUIRE((tau > -0.0011f && tau <= 1.0f));
    BOOST_TEST_REQUIRE(d.tq[size_t(s)] == timestep_bucket(tau));
    mean += tau / b.n_samples;
    below_half += (tau < 0.5f) / double(b.n_samples);
  }
  BOOST_TEST(std::fabs(mean - (0.999 - 0.6) / 0.999) < 0.015);
  // P(τ < 0.5) = P(s > 0.4995) = 1 − 0.4995^1.5 = 0.647
  BOOST_TEST(std::fabs(below_half - (1 - std::pow(0.4995, 1.5))) < 0.03);
  double m1 = 0, m2 = 0;
  for (float e : d.noise) m1 += e / double(d.noise.size()), m2 += double(e) * e / double(d.noise.size());
  BOOST_TEST(std::fabs(m1) < 0.01);
  BOOST_TEST(std::fabs(m2 - 1) < 0.02);
}

// Upstream's (τ·1000).long() on a float32 τ: the float32 product truncated toward zero, so the
// 0.15 % of draws with −0.001 < τ < 0 land in bucket 0 (floor would give −1), τ = 1 in 1000.
BOOST_AUTO_TEST_CASE(gr00t_timestep_bucket_truncates_the_float32_product) {
  BOOST_TEST(timestep_bucket(0.0f) == 0);
  BOOST_TEST(timestep_bucket(-0.0005f) == 0);
  BOOST_TEST(timestep_bucket(-0.001001f) == -1);
  BOOST_TEST(timestep_bucket(0.0015f) == 1);
  BOOST_TEST(timestep_bucket(0.5f) == 500);
  BOOST_TEST(timestep_bucket(0.99999f) == 999);
  BOOST_TEST(timestep_bucket(1.0f) == 1000);
}

// Training drops (a forward with a backward), evaluation does not, and p = 0 is the same
// network: the forward-only loss equals the training loss of the model without dropout, and
// differs from the training loss with it (parameters at a trained network's scales, so the
// blocks' outputs weigh in the loss).
BOOST_AUTO_TEST_CASE(gr00t_dropout_is_on_in_training_only) {
  ModelConfig cfg = preset_config("tiny_gr00t");
  BOOST_TEST(cfg.dropout == 0.2);
  BOOST_TEST(cfg.dropout_vl == 0.2);
  TinyModel with(cfg);
  cfg.dropout = cfg.dropout_vl = 0;
  TinyModel without(cfg);
  with.model->params().init_random(with.params.data(), kSeed);  // blocks whose outputs matter
  without.params = with.params;
  const PackedBatch b = make_synthetic_batch(cfg, sample_ids(4), true, kSeed);
  const double eval = with.eval_loss(b), train = with.loss(b);
  BOOST_TEST(eval == without.loss(b));
  BOOST_TEST(eval == without.eval_loss(b));
  BOOST_TEST(std::fabs(train - eval) > 1e-3 * eval);
  BOOST_TEST(with.loss(b) == train);  // the same step draws the same masks
}

// One timestep id per (sample, block), shared by its noisy video and action tokens: σ and the
// loss weight are the schedule's entries of one id; clean tokens have σ = 0, weight 0, no noise
// and temb_t = 0.
BOOST_AUTO_TEST_CASE(wan_sigma_per_block) {
  const ModelConfig cfg = preset_config("tiny_wan");
  const PackedBatch b = make_synthetic_batch(cfg, sample_ids(400), true, kSeed);
  TokenLayout L;
  build_token_layout(cfg, b, L);
  const FlowDraws d = draw(cfg, b, 5);
  const WanSchedule schedule(cfg.shift);
  std::map<std::pair<int32_t, int32_t>, float> block_sigma;
  double median_count = 0, n_blocks = 0;
  for (int64_t t = 0; t < b.n_tokens; ++t) {
    const float sigma = d.sigma[size_t(t)];
    if (b.kind[size_t(t)] == kClean) {
      BOOST_TEST_REQUIRE(sigma == 0.0f);
      BOOST_TEST_REQUIRE(d.loss_weight[size_t(t)] == 0.0f);
      BOOST_TEST_REQUIRE(d.temb_t[size_t(t)] == 0.0f);
      for (int e = 0; e < cfg.patch_dim_in(); ++e)
        BOOST_TEST_REQUIRE(d.video_noise[size_t(L.video_row[size_t(t)] * cfg.patch_dim_in() + e)] == 0.0f);
      continue;
    }
    int id = 0;
    while (id < kWanTrainTimesteps && float(schedule.sigma[size_t(id)]) != sigma) ++id;
    BOOST_TEST_REQUIRE(id < kWanTrainTimesteps);
    BOOST_TEST_REQUIRE(d.loss_weight[size_t(t)] == float(schedule.weight[size_t(id)]));
    // The timestep is upstream's float64 t = 1000·σ, held as two floats.
    const double t_exact = 1000.0 * schedule.sigma[size_t(id)];
    BOOST_TEST_REQUIRE(d.temb_t[size_t(t)] == float(t_exact));
    BOOST_TEST_REQUIRE(std::abs(double(d.temb_t[size_t(t)]) + double(d.temb_t_lo[size_t(t)]) - t_exact) <= 1e-12 * t_exact);
    auto [it, inserted] = block_sigma.emplace(std::make_pair(b.seq[size_t(t)], b.blk[size_t(t)]), sigma);
    BOOST_TEST_REQUIRE(it->second == sigma);
    if (inserted) {
      // median of σ is at id 500: shift/(shift + 1) = 5/6
      median_count += sigma < 5.0f / 6.0f;
      n_blocks += 1;
    }
  }
  BOOST_TEST(n_blocks > 700);
  BOOST_TEST(std::fabs(median_count / n_blocks - 0.5) < 0.06);
}

// Upstream's shift-5 table (spec_dreamzero.md "One sample" 2): σ_0 = 1, σ_999 = 0.005/1.004,
// σ falling; the weights' minimum 0 at id 0, mean 1, largest where t = 1000σ is nearest 500.
BOOST_AUTO_TEST_CASE(wan_schedule_is_upstreams) {
  const WanSchedule s(5.0);
  BOOST_TEST(s.sigma[0] == 1.0);
  BOOST_TEST(s.sigma[999] == 0.005 / 1.004, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(s.sigma[500] == 5.0 / 6.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(s.weight[0] == 0.0);
  double sum = 0, nearest = 1e9;
  int peak = 0, mid = 0;
  for (int i = 0; i < kWanTrainTimesteps; ++i) {
    if (i > 0) BOOST_TEST_REQUIRE(s.sigma[size_t(i)] < s.sigma[size_t(i - 1)]);
    BOOST_TEST_REQUIRE(s.weight[size_t(i)] >= 0.0);
    sum += s.weight[size_t(i)];
    if (s.weight[size_t(i)] > s.weight[size_t(peak)]) peak = i;
    if (std::fabs(1000 * s.sigma[size_t(i)] - 500) < nearest) nearest = std::fabs(1000 * s.sigma[size_t(i)] - 500), mid = i;
  }
  BOOST_TEST(sum / kWanTrainTimesteps == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(peak == mid);
  // w_i ∝ y_i − y_0 with y = exp(−2((t − 500)/1000)²) and y_0 = exp(−0.5) the minimum (t_0 = 1000).
  auto y = [&](int i) { return std::exp(-2 * std::pow((1000 * s.sigma[size_t(i)] - 500) / 1000, 2)); };
  BOOST_TEST(s.weight[size_t(mid)] / s.weight[999] == (y(mid) - y(0)) / (y(999) - y(0)),
             boost::test_tools::tolerance(1e-12));
  BOOST_TEST(y(0) == std::exp(-0.5), boost::test_tools::tolerance(1e-15));
}

// A sample's draws follow it from slot to slot and batch to batch.
BOOST_AUTO_TEST_CASE(draws_follow_the_sample_not_the_slot) {
  const ModelConfig cfg = preset_config("tiny_wan");
  const PackedBatch ab = make_synthetic_batch(cfg, {10, 11}, true, kSeed);
  const PackedBatch ba = make_synthetic_batch(cfg, {11, 10}, true, kSeed);
  const FlowDraws dab = draw(cfg, ab, 2), dba = draw(cfg, ba, 2), other_step = draw(cfg, ab, 3);
  // Sample 10 is first in ab and second in ba: its act noise rows are the tail of ba's.
  TokenLayout lab, lba;
  build_token_layout(cfg, ab, lab);
  build_token_layout(cfg, ba, lba);
  const size_t A = size_t(cfg.action_dim);
  size_t n10 = 0;
  for (int32_t t : lab.action) n10 += ab.seq[size_t(t)] == 0;
  const std::vector<float> first(dab.act_noise.begin(), dab.act_noise.begin() + long(n10 * A));
  const std::vector<float> last(dba.act_noise.end() - long(n10 * A), dba.act_noise.end());
  BOOST_TEST(first == last, boost::test_tools::per_element());
  BOOST_TEST(dab.act_noise != other_step.act_noise);
}

// flow_noise_draws counts the draws draw_flow makes: every drawn element is non-zero (a normal is
// never exactly 0 here), and the rest of the noise arrays (wan's clean video rows) stay 0.
BOOST_AUTO_TEST_CASE(flow_noise_draws_counts_the_drawn_elements) {
  for (const char* preset : {"tiny_gr00t", "tiny_wan", "tiny_dreamzero"}) {
    BOOST_TEST_CONTEXT(preset) {
      const ModelConfig cfg = preset_config(preset);
      const PackedBatch b = make_synthetic_batch(cfg, sample_ids(3), true, kSeed);
      const FlowDraws d = draw(cfg, b, 4);
      int64_t drawn = 0;
      for (const std::vector<float>* v : {&d.noise, &d.video_noise, &d.act_noise})
        for (float x : *v) drawn += x != 0.0f;
      BOOST_TEST(drawn > 0);
      BOOST_TEST(flow_noise_draws(cfg, b) == drawn);
    }
  }
}
