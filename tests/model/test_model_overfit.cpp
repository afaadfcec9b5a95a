// Single-rank training of each tiny family on one fixed batch (fixed step, so the flow-matching
// draws are fixed too) with AdamW: the model must be able to memorise it.
#define BOOST_TEST_MODULE model_overfit
#include <boost/test/unit_test.hpp>

#include "kernels/cpu/adamw.hpp"
#include "model_fixture.hpp"

using namespace emb;
using namespace emb::test;

namespace {

void check_overfit(const std::string& preset) {
  TinyModel m(preset);
  const PackedBatch b = make_synthetic_batch(m.model->config(), sample_ids(4), true, kSeed);
  const ParamRegistry& reg = m.model->params();
  std::vector<float> g(m.params.size()), adam_m(m.params.size(), 0.0f), adam_v(m.params.size(), 0.0f);
  cpu::AdamWConfig opt;
  opt.lr = 3e-3f, opt.beta2 = 0.99f, opt.weight_decay = 0.0f;
  const double first = m.loss(b);
  double last = first;
  for (int step = 1; step <= 300; ++step) {
    std::fill(g.begin(), g.end(), 0.0f);
    last = m.step(b, m.model->loss_counts(b), g);
    for (const ParamInfo& p : reg.all())
      cpu::adamw_step(m.params.data() + p.offset, g.data() + p.offset, adam_m.data() + p.offset,
                      adam_v.data() + p.offset, p.numel, opt, step, 1.0f, p.decay ? 1.0f : 0.0f);
  }
  BOOST_TEST_MESSAGE(preset << ": loss " << first << " -> " << last);
  BOOST_TEST(last * 10 <= first, preset << ": loss " << first << " -> " << last);
}

}  // namespace

BOOST_AUTO_TEST_CASE(gr00t_overfits_one_batch) { check_overfit("tiny_gr00t"); }
BOOST_AUTO_TEST_CASE(wan_overfits_one_batch) { check_overfit("tiny_wan"); }
