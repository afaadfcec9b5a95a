// The plan's training state per rank (plan/state_memory.hpp) against what the run allocates: the
// bytes DataParallel and the Optimizer take from the backend (counted by counting_ops.hpp) for
// each rank's ShardLayout of a frozen tiny_gr00t deck (train.tune_* off) and a trained one, every
// shard mode, fp32 and bf16, 1 and 3 ranks. Frozen tensors have no AdamW moments, and ZeRO splits each trained
// and frozen piece of a bucket by elements with the remainders to the first ranks, so the ranks' states differ
// and the plan is the largest rank's.
#define BOOST_TEST_MODULE state_memory
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "app/run_config_from_deck.hpp"
#include "comm/world_fixture.hpp"
#include "config/deck.hpp"
#include "model/model.hpp"
#include "parallel/shard_layout.hpp"
#include "parallel/zero3_schedule.hpp"
#include "plan/state_memory.hpp"
#include "plan/run_plan.hpp"
#include "state_allocations.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

namespace {

// tiny_gr00t with `flag` (train.tune_* = on | off) and buckets of ~10 kB (several per rank).
RunConfig tiny_gr00t_with(const std::string& flag) {
  return run_config_from_deck(load_deck(PROJECT_SOURCE_DIR "/inputs/tiny_gr00t.in", {flag, "train.bucket_mb=0.01"}));
}

}  // namespace

BOOST_AUTO_TEST_CASE(state_per_rank_is_what_the_largest_rank_allocates) {
  for (const std::string flag : {"train.tune_projector=off", "train.tune_diffusion_model=off", "train.tune_projector=on"})
    for (int ranks : {1, 3}) {
      RunConfig cfg = tiny_gr00t_with(flag);
      for (Precision precision : {Precision::fp32, Precision::bf16}) {
        cfg.model.precision = precision;
        const Workload w = workload_of_run(cfg, ranks);
        const std::unique_ptr<Model> model = make_model(w.model, nullptr);
        const PlanReport plan = make_plan(w.model, ranks, cfg.data.tokens_per_mb, {}, DType::f32, w.sharding());
        for (ShardMode mode : {ShardMode::none, ShardMode::grads, ShardMode::full}) {
          BOOST_TEST_CONTEXT(flag << ", " << ranks << " ranks, shard " << shard_mode_name(mode) << ", "
                                  << (precision == Precision::bf16 ? "bf16" : "fp32")) {
            std::vector<int64_t> per_rank;
            for (int r = 0; r < ranks; ++r)
              per_rank.push_back(test::allocated_state_bytes(model->params(), mode, r, ranks, w.sharding(),
                                                             precision == Precision::bf16));
            BOOST_TEST(plan.state(mode) == double(*std::max_element(per_rank.begin(), per_rank.end())));
            const bool frozen = std::count(w.frozen.begin(), w.frozen.end(), true) > 0;
            if (mode == ShardMode::full && ranks == 3 && frozen)  // the pieces' remainders: the ranks differ
              BOOST_TEST(*std::min_element(per_rank.begin(), per_rank.end()) < plan.state(mode));
          }
        }
      }
    }
}

// Without sharding, fp32: flat parameters and gradients of every element (4 + 4 bytes), AdamW's
// two moments of the trained ones only (8 bytes), one double per run of trained elements. The
// frozen deck's state is the trained deck's less 8 bytes per frozen parameter (and the runs).
BOOST_AUTO_TEST_CASE(frozen_parameters_have_no_moments) {
  RunConfig cfg = tiny_gr00t_with("train.tune_diffusion_model=off");
  const Workload w = workload_of_run(cfg, 1);
  const std::unique_ptr<Model> model = make_model(w.model, nullptr);
  const ParamRegistry& reg = model->params();
  int64_t frozen = 0;
  for (size_t i = 0; i < w.frozen.size(); ++i)
    if (w.frozen[i]) frozen += reg.all()[i].numel;
  BOOST_TEST(frozen > reg.total() / 2);  // the DiT is most of the head
  const PlanReport plan = make_plan(w.model, 1, cfg.data.tokens_per_mb, {}, DType::f32, w.sharding());
  const PlanReport trained = make_plan(w.model, 1, cfg.data.tokens_per_mb, {}, DType::f32, {w.sharding().bucket_bytes, {}});
  const ShardLayout frozen_layout(reg, ShardMode::none, 0, 1, 0, w.frozen), trained_layout(reg, ShardMode::none, 0, 1);
  const double N = double(reg.total());
  BOOST_TEST(plan.trainable_params == reg.total() - frozen);
  BOOST_TEST(plan.state(ShardMode::none) ==
             8 * N + 8 * double(reg.total() - frozen) + 8 * double(frozen_layout.trainable_runs().size()));
  BOOST_TEST(trained.state(ShardMode::none) == 16 * N + 8 * double(trained_layout.trainable_runs().size()));
  const StepPrediction s = predict_step(load_hardware("cpu_dev"), w);
  BOOST_TEST(s.checkpoint_bytes == 4 * N + 8 * double(reg.total() - frozen));
}

// bf16 compute: ZeRO-3's gather slots hold bf16 buckets, and one fp32 buffer of the largest
// bucket holds the widened bucket of whichever unit computes in fp32 (the encoders, the head),
// not one per slot. So against fp32 compute, ZeRO-3 adds the bf16 owned copy and the slots'
// bf16 staging, less all but one of the slots' fp32 buckets; without sharding, the flat bf16
// copy and that one buffer. Byte for byte, for 2 ranks of tiny_gr00t in buckets of ~10 kB.
BOOST_AUTO_TEST_CASE(bf16_compute_widens_one_bucket_at_a_time) {
  const Workload w = workload_of_run(tiny_gr00t_with("train.tune_projector=on"), 2);
  const std::unique_ptr<Model> model = make_model(w.model, nullptr);
  const ParamRegistry& reg = model->params();
  auto bf16_less_fp32 = [&](ShardMode mode) {
    return state_bytes_per_rank(reg, mode, 2, w.sharding(), true) - state_bytes_per_rank(reg, mode, 2, w.sharding(), false);
  };
  const double f32 = 4, b16 = 2;
  const ShardLayout full(reg, ShardMode::full, 0, 2, w.sharding().bucket_bytes);
  const double owned = double(full.owned_total()), largest = double(full.max_bucket_count());
  BOOST_TEST(full.n_buckets() > kGatherSlots);  // the slots are not every bucket
  BOOST_TEST(bf16_less_fp32(ShardMode::full) == b16 * owned + kGatherSlots * b16 * largest - (kGatherSlots - 1) * f32 * largest);
  const ShardLayout none(reg, ShardMode::none, 0, 2, w.sharding().bucket_bytes);
  BOOST_TEST(bf16_less_fp32(ShardMode::none) == b16 * double(none.flat_total()) + f32 * double(none.max_bucket_count()));
}
