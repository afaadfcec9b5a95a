// Whole-model gradient checks: central finite differences of the fp32 loss against the
// analytic gradient, per tensor and along a random direction; and recompute = selective and
// full giving bit-identical gradients to recompute = none, with less activation memory.
#define BOOST_TEST_MODULE model_grad
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "model_fixture.hpp"

using namespace emb;
using namespace emb::test;

namespace {

double central_difference(TinyModel& m, const PackedBatch& b, int64_t i, double eps) {
  const float p0 = m.params[size_t(i)];
  m.params[size_t(i)] = float(p0 + eps);
  const double up = m.loss(b);
  m.params[size_t(i)] = float(p0 - eps);
  const double down = m.loss(b);
  m.params[size_t(i)] = p0;
  return (up - down) / (2 * eps);
}

// The tiny model with parameters at a trained network's scales (ParamRegistry::init_random):
// with the initialisation's small weights and zero biases many relu inputs sit within a finite
// difference's step of their kink.
TinyModel trained_scale_model(const std::string& preset) {
  TinyModel m(preset);
  m.model->params().init_random(m.params.data(), kSeed);
  return m;
}

// For every tensor, the element with the largest |gradient| (so the finite difference has
// signal) and one random element, compared at eps = 1e-3: fp32 round-off of a loss ~1 is
// ~1e-7, i.e. ~1e-4 in the difference quotient, so the tolerance is 3% of the gradient plus
// 2e-4 absolute. Exact agreement is the job of the float64 parity tests (tests/upstream for
// gr00t, parity_torch.py for wan). Dropout is on: the loss differentiated is the training one.
void check_per_tensor(const std::string& preset) {
  TinyModel m = trained_scale_model(preset);
  const PackedBatch b = make_synthetic_batch(m.model->config(), sample_ids(3), true, kSeed);
  const std::vector<float> g = m.grads(b);
  const ParamRegistry& reg = m.model->params();
  const CounterRng rng(kSeed, RngStream::test, 1);
  int checked = 0, nonzero_tensors = 0;
  for (int t = 0; t < reg.size(); ++t) {
    const ParamInfo& p = reg[t];
    int64_t best = p.offset;
    for (int64_t i = p.offset; i < p.offset + p.numel; ++i)
      if (std::fabs(g[size_t(i)]) > std::fabs(g[size_t(best)])) best = i;
    nonzero_tensors += g[size_t(best)] != 0.0f;
    for (int64_t i : {best, p.offset + int64_t(rng.bits(uint64_t(t)) % uint64_t(p.numel))}) {
      const double fd = central_difference(m, b, i, 1e-3);
      BOOST_TEST_CONTEXT(preset << " " << p.name << " element " << i - p.offset) {
        BOOST_TEST(std::fabs(fd - g[size_t(i)]) <= 3e-2 * std::fabs(g[size_t(i)]) + 2e-4,
                   "finite difference " << fd << " vs analytic " << g[size_t(i)]);
      }
      ++checked;
    }
  }
  BOOST_TEST(checked >= 50);
  // Every tensor takes part in the loss (gr00t's pos_emb, future tokens, every block, ...).
  BOOST_TEST(nonzero_tensors == reg.size());
}

// d/dε L(p + ε·d) against g·d for a random direction over all parameters.
void check_directional(const std::string& preset) {
  TinyModel m = trained_scale_model(preset);
  const PackedBatch b = make_synthetic_batch(m.model->config(), sample_ids(3), true, kSeed);
  const std::vector<float> g = m.grads(b);
  const CounterRng rng(kSeed, RngStream::test, 2);
  std::vector<float> d(g.size());
  double gd = 0;
  for (size_t i = 0; i < d.size(); ++i) d[i] = float(rng.normal(i)), gd += double(g[i]) * d[i];
  const std::vector<float> p0 = m.params;
  // The direction moves every parameter, so the step is small enough that no relu flips.
  const double eps = 1e-4;
  auto loss_at = [&](double s) {
    for (size_t i = 0; i < d.size(); ++i) m.params[i] = float(p0[i] + s * d[i]);
    return m.loss(b);
  };
  const double fd = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
  m.params = p0;
  BOOST_TEST(std::fabs(fd - gd) <= 2e-2 * std::fabs(gd), preset << ": directional " << fd << " vs g·d " << gd);
}

// 5 blocks, so blocks share the pools of recomputed activations (a slot per block layout).
void check_recompute(const std::string& preset, Recompute recompute) {
  ModelConfig cfg = preset_config(preset);
  cfg.n_layers = 5;
  TinyModel none(cfg);
  cfg.recompute = recompute;
  TinyModel recomputed(cfg);
  const PackedBatch b = make_synthetic_batch(cfg, sample_ids(3), true, kSeed);
  double l_none = 0, l_recomputed = 0;
  const std::vector<float> g_none = none.grads(b, &l_none), g_recomputed = recomputed.grads(b, &l_recomputed);
  BOOST_TEST(l_none == l_recomputed);
  BOOST_TEST(g_none == g_recomputed, boost::test_tools::per_element());
}

// Activation bytes of a micro-batch as --plan reports them, per recompute mode, with 8 blocks
// (the pools of recomputed activations hold one block's worth per block layout).
size_t activation_bytes(const std::string& preset, Recompute recompute) {
  ModelConfig cfg = preset_config(preset);
  cfg.n_layers = 8, cfg.recompute = recompute;
  const PackedBatch b = make_synthetic_batch(cfg, sample_ids(3), true, kSeed);
  return make_model(cfg, &cpu_ops)->activation_bytes(b, DType::f32).total;
}

void check_recompute_saves_memory(const std::string& preset) {
  const size_t none = activation_bytes(preset, Recompute::none),
               selective = activation_bytes(preset, Recompute::selective),
               full = activation_bytes(preset, Recompute::full);
  BOOST_TEST_MESSAGE(preset << " activation bytes: none " << none << ", selective " << selective << ", full " << full);
  BOOST_TEST(selective < none);
  BOOST_TEST(full < selective);
}

}  // namespace

BOOST_AUTO_TEST_CASE(gr00t_finite_differences) { check_per_tensor("tiny_gr00t"); }
BOOST_AUTO_TEST_CASE(wan_finite_differences) { check_per_tensor("tiny_wan"); }
// The DreamZero layout with its CLIP context (img_emb, the image half of every cross-attention),
// y channels, action mask and has_real_action.
BOOST_AUTO_TEST_CASE(dreamzero_finite_differences) { check_per_tensor("tiny_dreamzero"); }
BOOST_AUTO_TEST_CASE(gr00t_directional_derivative) { check_directional("tiny_gr00t"); }
BOOST_AUTO_TEST_CASE(wan_directional_derivative) { check_directional("tiny_wan"); }
BOOST_AUTO_TEST_CASE(gr00t_recompute_full_is_bit_identical) { check_recompute("tiny_gr00t", Recompute::full); }
BOOST_AUTO_TEST_CASE(wan_recompute_full_is_bit_identical) { check_recompute("tiny_wan", Recompute::full); }
BOOST_AUTO_TEST_CASE(gr00t_recompute_selective_is_bit_identical) {
  check_recompute("tiny_gr00t", Recompute::selective);
}
BOOST_AUTO_TEST_CASE(wan_recompute_selective_is_bit_identical) { check_recompute("tiny_wan", Recompute::selective); }
BOOST_AUTO_TEST_CASE(dreamzero_recompute_full_is_bit_identical) { check_recompute("tiny_dreamzero", Recompute::full); }
BOOST_AUTO_TEST_CASE(dreamzero_recompute_selective_is_bit_identical) {
  check_recompute("tiny_dreamzero", Recompute::selective);
}
BOOST_AUTO_TEST_CASE(gr00t_recompute_saves_activation_memory) { check_recompute_saves_memory("tiny_gr00t"); }
BOOST_AUTO_TEST_CASE(wan_recompute_saves_activation_memory) { check_recompute_saves_memory("tiny_wan"); }
