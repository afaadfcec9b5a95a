// UnitHooks (ZeRO-3): with hooks the model reads every unit's parameters only through the
// hook (the flat buffer is not even passed), visits units in order forward and in reverse
// backward, and never touches a unit's gradients after reporting them ready; the gradients
// are bit-identical to the flat-buffer run.
#define BOOST_TEST_MODULE model_hooks
#include <boost/test/unit_test.hpp>

#include "model_fixture.hpp"

using namespace emb;
using namespace emb::test;

namespace {

class RecordingHooks : public UnitHooks {
 public:
  RecordingHooks(const ParamRegistry& reg, const std::vector<float>& flat) : reg_(reg) {
    for (int u = 0; u < reg.n_units(); ++u) {
      const UnitRange& r = reg.unit(u);
      params_.emplace_back(flat.begin() + r.offset, flat.begin() + r.offset + r.count);
      grads_.emplace_back(size_t(r.count), 0.0f);
    }
    ready_copy_.resize(grads_.size());
  }
  // On CpuOps every unit computes in fp32 (Model::training_blocks_dtype).
  const void* unit_params(int u, bool backward, DType) override {
    (backward ? backward_ : forward_).push_back(u);
    return params_[size_t(u)].data();
  }
  float* unit_grads(int u) override { return grads_[size_t(u)].data(); }
  void unit_grads_ready(int u) override {
    ready_.push_back(u);
    ready_copy_[size_t(u)] = grads_[size_t(u)];
  }
  std::vector<float> flat_grads() const {
    std::vector<float> g;
    for (const auto& u : grads_) g.insert(g.end(), u.begin(), u.end());
    return g;
  }

  const ParamRegistry& reg_;
  std::vector<std::vector<float>> params_, grads_, ready_copy_;
  std::vector<int> forward_, backward_, ready_;
};

void check_hooks(const std::string& preset) {
  TinyModel m(preset);
  const PackedBatch b = make_synthetic_batch(m.model->config(), sample_ids(3), true, kSeed);
  double flat_loss = 0;
  const std::vector<float> flat = m.grads(b, &flat_loss);

  const ParamRegistry& reg = m.model->params();
  RecordingHooks hooks(reg, m.params);
  const double loss = m.model->forward_backward(nullptr, nullptr, b, kStep, kSeed, m.model->loss_counts(b), &hooks);
  BOOST_TEST(loss == flat_loss);
  BOOST_TEST(hooks.flat_grads() == flat, boost::test_tools::per_element());

  std::vector<int> up, down;
  for (int u = 0; u < reg.n_units(); ++u) up.push_back(u), down.insert(down.begin(), u);
  BOOST_TEST(hooks.forward_ == up, boost::test_tools::per_element());
  BOOST_TEST(hooks.backward_ == down, boost::test_tools::per_element());
  BOOST_TEST(hooks.ready_ == down, boost::test_tools::per_element());
  for (int u = 0; u < reg.n_units(); ++u)
    BOOST_TEST(hooks.ready_copy_[size_t(u)] == hooks.grads_[size_t(u)], "unit " << reg.unit(u).name
                                                                                << " changed after ready");
}

}  // namespace

BOOST_AUTO_TEST_CASE(gr00t_unit_hooks) { check_hooks("tiny_gr00t"); }
BOOST_AUTO_TEST_CASE(wan_unit_hooks) { check_hooks("tiny_wan"); }
