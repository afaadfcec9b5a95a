// The planner's dry step (src/plan/elementwise_work.hpp) against a real one: the elementwise ops
// of a forward + backward on the CPU backend, recorded by pass as the trainer times them (the
// backward from the first unit asked for its backward), their bytes, calls and the arithmetic
// ops' elements equal the dry step's, which ran none of them.
#define BOOST_TEST_MODULE elementwise_work
#include <boost/test/unit_test.hpp>
#include <vector>

#include "kernels/cpu/cpu_ops.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "model/synthetic_batch.hpp"
#include "model/unit_hooks.hpp"
#include "plan/elementwise_work.hpp"
#include "plan/model_cost.hpp"

using namespace emb;

namespace {

// Real parameters and gradients, unit by unit; the backward starts at the first unit asked for it.
class RealHooks final : public UnitHooks {
 public:
  RealHooks(const ParamRegistry& reg, std::vector<float>& params, std::vector<float>& grads, ElementwiseRecorder& ops)
      : reg_(reg), params_(params), grads_(grads), ops_(ops) {}
  const void* unit_params(int u, bool backward, DType) override {
    ops_.backward = ops_.backward || backward;
    return params_.data() + reg_.unit(u).offset;
  }
  float* unit_grads(int u) override { return grads_.data() + reg_.unit(u).offset; }
  void unit_grads_ready(int) override {}

 private:
  const ParamRegistry& reg_;
  std::vector<float>& params_;
  std::vector<float>& grads_;
  ElementwiseRecorder& ops_;
};

void check_pass(const ElementwisePass& dry, const ElementwisePass& real, const char* pass) {
  BOOST_TEST_CONTEXT(pass) {
    BOOST_TEST(real.bytes > 0);
    BOOST_TEST(dry.bytes == real.bytes);
    BOOST_TEST(dry.calls == real.calls);
    BOOST_TEST(dry.op_calls == real.op_calls);
    BOOST_TEST(dry.op_calls > dry.calls);
    BOOST_TEST(real.gemm_row_flops > 0);
    BOOST_TEST(dry.gemm_row_flops == real.gemm_row_flops);
    BOOST_TEST((dry.arithmetic == real.arithmetic));
  }
}

// The second of two real steps (the first packs frozen weights and lays out the arena).
ElementwiseWork real_step(const ModelConfig& cfg, const PackedBatch& batch, const std::vector<bool>& frozen) {
  CpuOps cpu;
  ElementwiseRecorder ops(cpu, true);
  const std::unique_ptr<Model> model = make_model(cfg, &ops);
  model->freeze(frozen);
  std::vector<float> params(size_t(model->params().total())), grads(params.size());
  model->init_params(params.data(), 7);
  RealHooks hooks(model->params(), params, grads, ops);
  for (int step = 1; step <= 2; ++step) {
    ops.backward = false;
    ops.work = {};
    model->forward_backward(nullptr, nullptr, batch, step, 7, model->loss_counts(batch), &hooks);
  }
  return ops.work;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_dry_step_gives_a_real_steps_elementwise_ops_by_pass) {
  for (const char* preset : {"tiny_gr00t", "tiny_wan"}) {
    BOOST_TEST_CONTEXT(preset) {
      const ModelConfig cfg = preset_config(preset);
      const PackedBatch batch = make_synthetic_batch(cfg, {0, 1, 2}, true, 7);
      const ElementwiseWork real = real_step(cfg, batch, {});
      const ElementwiseWork dry = elementwise_work(cfg, batch, {}, false);
      check_pass(dry.fwd, real.fwd, "fwd");
      check_pass(dry.bwd, real.bwd, "bwd");
      BOOST_TEST(real.fwd.arithmetic.count("sinus_embedding") == 1u);
      BOOST_TEST(real.bwd.calls > real.fwd.calls);  // every gradient zeroed
      // both models' blocks normalise (adaLN), forward and backward, on rows of their width
      const ArithmeticWork& norm = real.bwd.arithmetic.at("norm_modulate_backward");
      BOOST_TEST(norm.rows > 0);
      BOOST_TEST(norm.elements == norm.rows * double(cfg.d_model));
      BOOST_TEST(real.fwd.arithmetic.count("norm_modulate_backward") == 0u);
    }
  }
}

// A frozen tensor's gradient is neither zeroed nor summed: the dry step freezes as told.
BOOST_AUTO_TEST_CASE(frozen_tensors_leave_the_backward_less_to_do) {
  const ModelConfig cfg = preset_config("tiny_gr00t");
  const PackedBatch batch = make_synthetic_batch(cfg, {0, 1}, true, 7);
  const std::unique_ptr<Model> registry = make_model(cfg, nullptr);
  std::vector<bool> frozen(registry->params().all().size(), false);
  for (size_t i = 0; i < frozen.size(); i += 2) frozen[i] = true;
  const ElementwiseWork all = elementwise_work(cfg, batch, {}, false);
  const ElementwiseWork some = elementwise_work(cfg, batch, frozen, false);
  BOOST_TEST(some.bwd.bytes < all.bwd.bytes);
  const ElementwiseWork real = real_step(cfg, batch, frozen);
  check_pass(some.fwd, real.fwd, "fwd");
  check_pass(some.bwd, real.bwd, "bwd");
}

// Equal samples make a micro-batch's work fixed + samples × per sample, figure by figure: the fit
// of one- and two-sample dry steps gives a three-sample step's, packed and with padded context.
BOOST_AUTO_TEST_CASE(the_fit_of_one_and_two_samples_gives_any_micro_batch) {
  for (const char* preset : {"tiny_gr00t", "tiny_wan"})
    for (int64_t padded_context : {int64_t(0), int64_t(48)}) {
      BOOST_TEST_CONTEXT(preset << ", context padded to " << padded_context) {
        const ModelConfig cfg = preset_config(preset);
        PlanSample shape;
        shape.padded_context = padded_context;
        const ElementwiseFit fit = fit_elementwise_work(cfg, shape, {}, false);
        const ElementwiseWork three = elementwise_work(cfg, plan_micro_batch(cfg, 3, shape, true), {}, false);
        const ElementwiseWork fitted = fit.micro_batch(3);
        for (const auto& [dry, from_fit] : {std::pair{three.fwd, fitted.fwd}, std::pair{three.bwd, fitted.bwd}}) {
          BOOST_TEST(from_fit.bytes == dry.bytes, boost::test_tools::tolerance(1e-12));
          BOOST_TEST(from_fit.calls == dry.calls, boost::test_tools::tolerance(1e-12));
          BOOST_TEST(from_fit.op_calls == dry.op_calls, boost::test_tools::tolerance(1e-12));
          BOOST_TEST(from_fit.gemm_row_flops == dry.gemm_row_flops, boost::test_tools::tolerance(1e-12));
          for (const auto& [op, work] : dry.arithmetic) {
            BOOST_TEST(from_fit.arithmetic.at(op).elements == work.elements, boost::test_tools::tolerance(1e-12));
            BOOST_TEST(from_fit.arithmetic.at(op).rows == work.rows, boost::test_tools::tolerance(1e-12));
            BOOST_TEST(from_fit.arithmetic.at(op).bytes == work.bytes, boost::test_tools::tolerance(1e-12));
          }
        }
        BOOST_TEST(fit.per_sample.bwd.bytes > 0);
        // A micro-batch's GEMMs and op calls are its model's, whatever its samples.
        BOOST_TEST(fit.per_sample.fwd.gemm_row_flops == 0.0);
        BOOST_TEST(fit.per_sample.bwd.op_calls == 0.0);
      }
    }
}
