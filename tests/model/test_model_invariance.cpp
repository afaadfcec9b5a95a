// Loss normalisation does not depend on packing (DATA.md "Packing"): the same samples packed
// in another order, split into two micro-batches with global denominators, or padded
// (packing = off) give the same loss and gradients up to fp32 summation order.
#define BOOST_TEST_MODULE model_invariance
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>

#include "model_fixture.hpp"

using namespace emb;
using namespace emb::test;

namespace {

struct Result {
  double loss = 0;
  std::vector<float> grads;
};

// Accumulates the micro-batches' losses and gradients with denominators summed over all of them.
Result run_split(TinyModel& m, const std::vector<PackedBatch>& micro) {
  std::vector<double> den(m.model->loss_counts(micro[0]).size(), 0.0);
  for (const PackedBatch& b : micro) {
    const std::vector<double> c = m.model->loss_counts(b);
    for (size_t i = 0; i < c.size(); ++i) den[i] += c[i];
  }
  Result r;
  r.grads.assign(m.params.size(), 0.0f);
  for (const PackedBatch& b : micro) r.loss += m.step(b, den, r.grads);
  return r;
}

// fp32 GEMMs and reductions sum in a shape-dependent order: 1e-5 of the largest gradient.
void check_same(const Result& ref, const Result& other, const char* what) {
  BOOST_TEST_CONTEXT(what) {
    BOOST_TEST(std::fabs(other.loss - ref.loss) <= 1e-6 * std::fabs(ref.loss));
    float scale = 0, diff = 0;
    for (size_t i = 0; i < ref.grads.size(); ++i) {
      scale = std::max(scale, std::fabs(ref.grads[i]));
      diff = std::max(diff, std::fabs(other.grads[i] - ref.grads[i]));
    }
    BOOST_TEST(scale > 0.0f);
    BOOST_TEST(diff <= 1e-5f * scale, "max gradient difference " << diff << " of scale " << scale);
  }
}

void check_invariance(const std::string& preset) {
  TinyModel m(preset);
  const ModelConfig& cfg = m.model->config();
  const Result ref = run_split(m, {make_synthetic_batch(cfg, {0, 1, 2, 3, 4}, true, kSeed)});
  check_same(ref, run_split(m, {make_synthetic_batch(cfg, {3, 0, 4, 1, 2}, true, kSeed)}), "reordered");
  check_same(ref,
             run_split(m, {make_synthetic_batch(cfg, {0, 1, 2}, true, kSeed),
                           make_synthetic_batch(cfg, {3, 4}, true, kSeed)}),
             "two micro-batches");
  const PackedBatch packed = make_synthetic_batch(cfg, {0, 1, 2, 3, 4}, true, kSeed);
  const PackedBatch padded = make_synthetic_batch(cfg, {0, 1, 2, 3, 4}, false, kSeed);
  BOOST_TEST(padded.n_context > packed.n_context);  // the samples differ in length: padding is real
  if (cfg.family == Family::wan) BOOST_TEST(padded.n_tokens > packed.n_tokens);
  check_same(ref, run_split(m, {padded}), "padded");
}

}  // namespace

BOOST_AUTO_TEST_CASE(gr00t_packing_invariance) { check_invariance("tiny_gr00t"); }
BOOST_AUTO_TEST_CASE(wan_packing_invariance) { check_invariance("tiny_wan"); }
