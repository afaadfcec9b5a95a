// Model::flow_velocity, the forward path of closed-loop evaluation (tools/embsim): the
// velocity it returns for the noisy chunk and τ that training's forward drew reproduces the
// forward's loss (evaluation: no dropout), and a sample's velocity does not depend on the batch
// it is packed in. Model::accumulate_flow_regression, RL's backward: with training's draws it is
// training's step without dropout (the policy's network), and real per-element weights (of any
// sign) scale each sample's gradient linearly.
#define BOOST_TEST_MODULE model_policy
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "model_fixture.hpp"

using namespace emb;
using namespace emb::test;

BOOST_AUTO_TEST_CASE(policy_velocity_reproduces_the_training_loss) {
  TinyModel m("tiny_gr00t");
  const ModelConfig& cfg = m.model->config();
  const PackedBatch batch = make_synthetic_batch(cfg, sample_ids(6), true, kSeed);
  const double train_loss = m.eval_loss(batch);
  const FlowDraws draws = m.model->last_draws();
  PackedBatch noisy = batch;  // actions := x = (1 − τ)ε + τ·a, as the training forward mixed them
  const size_t per_sample = size_t(cfg.horizon) * cfg.action_dim;
  for (int s = 0; s < batch.n_samples; ++s)
    for (size_t e = 0; e < per_sample; ++e) {
      const size_t i = s * per_sample + e;
      noisy.actions[i] = (1.0f - draws.tau[size_t(s)]) * draws.noise[i] + draws.tau[size_t(s)] * batch.actions[i];
    }
  std::vector<float> v;
  m.model->flow_velocity(m.params.data(), noisy, draws.tau, v);
  BOOST_TEST_REQUIRE(v.size() == batch.actions.size());
  double loss = 0, count = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double diff = double(v[i]) - (double(batch.actions[i]) - double(draws.noise[i]));
    loss += batch.action_mask[i] * diff * diff;
    count += batch.action_mask[i];
  }
  loss /= count;
  BOOST_TEST(train_loss > 0.1);
  BOOST_TEST(std::abs(loss - train_loss) <= 1e-5 * train_loss, "policy loss " << loss << " vs training " << train_loss);
}

BOOST_AUTO_TEST_CASE(policy_velocity_does_not_depend_on_the_batch) {
  TinyModel m("tiny_gr00t");
  const ModelConfig& cfg = m.model->config();
  const std::vector<int64_t> ids = sample_ids(4);
  const PackedBatch all = make_synthetic_batch(cfg, ids, true, kSeed);
  const std::vector<float> tau{0.0f, 0.25f, 0.5f, 0.75f};
  std::vector<float> v_all;
  m.model->flow_velocity(m.params.data(), all, tau, v_all);
  const size_t per_sample = size_t(cfg.horizon) * cfg.action_dim;
  for (int s = 0; s < all.n_samples; ++s) {
    const PackedBatch one = make_synthetic_batch(cfg, {all.sample_id[size_t(s)]}, true, kSeed);
    std::vector<float> v_one;
    m.model->flow_velocity(m.params.data(), one, {tau[size_t(s)]}, v_one);
    double worst = 0;
    for (size_t e = 0; e < per_sample; ++e) worst = std::max(worst, double(std::abs(v_one[e] - v_all[s * per_sample + e])));
    BOOST_TEST(worst <= 1e-5, "sample slot " << s << ": max |Δv| " << worst);
  }
}

BOOST_AUTO_TEST_CASE(flow_regression_with_training_draws_is_the_training_step) {
  ModelConfig cfg = preset_config("tiny_gr00t");
  cfg.dropout = cfg.dropout_vl = 0;  // the policy's network: training's without dropout
  TinyModel m(cfg);
  const PackedBatch batch = make_synthetic_batch(m.model->config(), sample_ids(5), true, kSeed);
  double train_loss = 0;
  const std::vector<float> g_train = m.grads(batch, &train_loss);
  const FlowDraws draws = m.model->last_draws();
  std::vector<float> g(m.params.size(), 0.0f);
  m.model->accumulate_flow_regression(m.params.data(), g.data(), batch, draws.tau, draws.noise,
                                      m.model->loss_counts(batch)[0]);
  const double loss = m.model->take_loss();
  BOOST_TEST(std::abs(loss - train_loss) <= 1e-6 * train_loss, "regression " << loss << " vs training " << train_loss);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    worst = std::max(worst, double(std::abs(g[i] - g_train[i])));
    scale = std::max(scale, double(std::abs(g_train[i])));
  }
  BOOST_TEST(scale > 0.0);
  BOOST_TEST(worst <= 1e-6 * scale, "max |Δg| " << worst << " of " << scale);
}

BOOST_AUTO_TEST_CASE(flow_regression_weights_scale_each_sample_linearly) {
  TinyModel m("tiny_gr00t");
  const ModelConfig& cfg = m.model->config();
  const std::vector<int64_t> ids = sample_ids(3);
  const std::vector<float> weights{0.5f, -2.0f, 1.5f};  // a negative weight pushes v away from the target
  const size_t per_sample = size_t(cfg.horizon) * cfg.action_dim;
  auto regression_grads = [&](const std::vector<int64_t>& which, const std::vector<float>& w) {
    PackedBatch b = make_synthetic_batch(cfg, which, true, kSeed);
    std::vector<float> tau, noise(b.actions.size());
    for (int s = 0; s < b.n_samples; ++s) {
      const int64_t id = b.sample_id[size_t(s)];
      tau.push_back(0.25f * float(id % 4));
      for (size_t e = 0; e < per_sample; ++e) {
        noise[s * per_sample + e] = 0.1f * float((id * 7 + int64_t(e)) % 11) - 0.5f;
        b.action_mask[s * per_sample + e] = w[size_t(id)];
      }
    }
    std::vector<float> g(m.params.size(), 0.0f);
    m.model->accumulate_flow_regression(m.params.data(), g.data(), b, tau, noise, 2.0);
    m.model->take_loss();
    return g;
  };
  const std::vector<float> together = regression_grads(ids, weights);
  std::vector<float> sum(m.params.size(), 0.0f);
  for (int64_t id : ids) {
    const std::vector<float> one = regression_grads({id}, weights);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += one[i];
  }
  double worst = 0, scale = 0;
  for (size_t i = 0; i < sum.size(); ++i) {
    worst = std::max(worst, double(std::abs(together[i] - sum[i])));
    scale = std::max(scale, double(std::abs(sum[i])));
  }
  BOOST_TEST(scale > 0.0);
  BOOST_TEST(worst <= 1e-5 * scale, "max |Δg| " << worst << " of " << scale);
}
