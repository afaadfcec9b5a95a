// The micro-batches --plan costs (src/plan/plan_batches.hpp): the activation rows of n samples
// from the 1- and 2-sample batches equal those of the n-sample batch built whole, and a scope's
// memo hands out the batch plan_micro_batch builds, once per layout, sample shape and count.
#define BOOST_TEST_MODULE plan_batches
#include <boost/test/unit_test.hpp>
#include <memory>
#include <vector>

#include "model/model.hpp"
#include "model/presets.hpp"
#include "plan/model_cost.hpp"
#include "plan/plan_batches.hpp"

using namespace emb;

namespace {

// The sample shapes --plan costs: the typical one, a data's mean context, packing off's padding.
std::vector<PlanSample> shapes() {
  PlanSample mean, padded;
  mean.context_tokens = 21;
  padded.context_tokens = 21, padded.padded_context = 64;
  return {PlanSample{}, mean, padded};
}

void check_same_batch(const PackedBatch& a, const PackedBatch& b) {
  BOOST_TEST(a.n_tokens == b.n_tokens);
  BOOST_TEST(a.n_context == b.n_context);
  BOOST_TEST(a.n_samples == b.n_samples);
  BOOST_TEST(a.seq == b.seq);
  BOOST_TEST(a.kind == b.kind);
  BOOST_TEST(a.blk == b.blk);
  BOOST_TEST(a.grp == b.grp);
  BOOST_TEST(a.pos == b.pos);
  BOOST_TEST(a.cseq == b.cseq);
}

}  // namespace

BOOST_AUTO_TEST_CASE(activation_rows_of_n_samples_from_one_and_two) {
  for (const char* preset : {"tiny_gr00t", "tiny_wan", "tiny_dreamzero"})
    for (const PlanSample& shape : shapes())
      for (int n : {1, 2, 3, 7}) {
        BOOST_TEST_CONTEXT(preset << ", context " << shape.context_tokens << " padded to " << shape.padded_context
                                  << ", " << n << " samples") {
          const ModelConfig c = preset_config(preset);
          const ActivationRows whole = activation_rows(c, plan_micro_batch(c, n, shape));
          const ActivationRows fitted = plan_activation_rows(c, n, shape);
          BOOST_TEST(fitted.tokens == whole.tokens);
          BOOST_TEST(fitted.context == whole.context);
          BOOST_TEST(fitted.samples == n);
          BOOST_TEST(fitted.time_rows == whole.time_rows);
          BOOST_TEST(fitted.video == whole.video);
          BOOST_TEST(fitted.noisy_video == whole.noisy_video);
          BOOST_TEST(fitted.actions == whole.actions);
          BOOST_TEST(fitted.states == whole.states);
          // and the bytes the run's arena plans for them
          const std::unique_ptr<Model> model = make_model(c, nullptr);
          BOOST_TEST(model->activation_bytes(fitted, DType::f32).total ==
                     model->activation_bytes(plan_micro_batch(c, n, shape), DType::f32).total);
        }
      }
}

BOOST_AUTO_TEST_CASE(a_scope_builds_each_batch_once) {
  const ModelConfig c = preset_config("tiny_wan");
  const PlanSample shape = shapes()[2];
  // Without a scope, each request builds its own.
  BOOST_TEST(plan_batch(c, 2, shape) != plan_batch(c, 2, shape));
  std::shared_ptr<const PackedBatch> outer;
  {
    const PlanBatchScope scope;
    outer = plan_batch(c, 2, shape);
    check_same_batch(*outer, plan_micro_batch(c, 2, shape));
    BOOST_TEST(plan_batch(c, 2, shape) == outer);
    {
      const PlanBatchScope nested;  // shares the outer scope's batches and leaves them to it
      BOOST_TEST(plan_batch(c, 2, shape) == outer);
    }
    BOOST_TEST(plan_batch(c, 2, shape) == outer);
    // Another count, shape or token layout is another batch, as plan_micro_batch builds it.
    const std::shared_ptr<const PackedBatch> three = plan_batch(c, 3, shape);
    BOOST_TEST(three != outer);
    check_same_batch(*three, plan_micro_batch(c, 3, shape));
    const std::shared_ptr<const PackedBatch> typical = plan_batch(c, 2, PlanSample{});
    BOOST_TEST(typical != outer);
    check_same_batch(*typical, plan_micro_batch(c, 2, PlanSample{}));
    ModelConfig longer = c;
    longer.latent_frames += longer.frames_per_block;
    const std::shared_ptr<const PackedBatch> longer_batch = plan_batch(longer, 2, shape);
    BOOST_TEST(longer_batch->n_tokens > outer->n_tokens);
    check_same_batch(*longer_batch, plan_micro_batch(longer, 2, shape));
    // A change of the model outside the token layout is the same layout.
    ModelConfig deeper = c;
    deeper.n_layers += 1;
    deeper.recompute = Recompute::full;
    BOOST_TEST(plan_batch(deeper, 2, shape) == outer);
  }
  // The scope closed: its batches went with it (the one held here outlives it).
  BOOST_TEST(plan_batch(c, 2, shape) != outer);
  check_same_batch(*outer, plan_micro_batch(c, 2, shape));
}

BOOST_AUTO_TEST_CASE(token_layouts_compare_every_field) {
  const ModelConfig c = preset_config("tiny_dreamzero");
  BOOST_TEST((TokenConfig(c) == TokenConfig(c)));
  TokenConfig other = c;
  other.text_len += 1;
  BOOST_TEST(!(other == TokenConfig(c)));
  other = c;
  other.patch[2] += 1;
  BOOST_TEST(!(other == TokenConfig(c)));
  other = c;
  other.first_frame_block = !other.first_frame_block;
  BOOST_TEST(!(other == TokenConfig(c)));
}

BOOST_AUTO_TEST_CASE(make_plan_in_a_scope_equals_it_outside) {
  for (const char* preset : {"tiny_gr00t", "tiny_dreamzero"}) {
    const ModelConfig c = preset_config(preset);
    const PlanSample shape = shapes()[1];
    const PlanReport alone = make_plan(c, 2, 2048, shape);
    const PlanBatchScope scope;
    const PlanReport scoped = make_plan(c, 2, 2048, shape);
    BOOST_TEST(scoped.samples_per_mb == alone.samples_per_mb);
    BOOST_TEST(scoped.samples_per_mb > 2);
    BOOST_TEST(scoped.activation_bytes == alone.activation_bytes);
    BOOST_TEST(scoped.flops_fwd == alone.flops_fwd);
    BOOST_TEST(scoped.self_pairs_per_sample == alone.self_pairs_per_sample);
  }
}
