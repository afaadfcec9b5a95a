// The activation arena's layout at small shapes, byte for byte: what full recompute keeps per
// block, the pool and the gradient scratch the blocks share. --plan reports the same layout
// (Model::activation_bytes), so these are its figures too.
#define BOOST_TEST_MODULE activation_memory
#include <boost/test/unit_test.hpp>

#include "core/error.hpp"
#include "model/dit_block.hpp"
#include "model_fixture.hpp"

using namespace emb;
using namespace emb::test;

namespace {

// An ActivationPlan's bytes for n elements of `bytes_each` (each tensor rounded up to 64).
size_t tensor(int64_t n, size_t bytes_each) { return (size_t(n) * bytes_each + 63) & ~size_t(63); }

struct Measured {
  size_t bytes = 0;
  int64_t T = 0, Tc = 0;
};

// The activation bytes of a micro-batch of three samples of `preset` with `layers` blocks.
Measured activation_bytes(const std::string& preset, int layers, Recompute recompute) {
  ModelConfig cfg = preset_config(preset);
  cfg.n_layers = layers, cfg.recompute = recompute;
  const PackedBatch b = make_synthetic_batch(cfg, sample_ids(3), true, kSeed);
  return {make_model(cfg, nullptr)->activation_bytes(b.n_tokens, b.n_context, b.n_samples, DType::f32).total,
          b.n_tokens, b.n_context};
}

}  // namespace

// Full recompute: a block beyond the first adds only its fp32 input [T, D]; every block reuses
// the pool slot of its layout (one for wan's identical blocks, one per parity for gr00t's
// alternating cross/self blocks).
BOOST_AUTO_TEST_CASE(full_recompute_keeps_one_input_per_block_and_one_pool_slot_per_layout) {
  for (const char* preset : {"tiny_wan", "tiny_dreamzero"}) {
    const Measured one = activation_bytes(preset, 1, Recompute::full), eight = activation_bytes(preset, 8, Recompute::full);
    BOOST_TEST(eight.bytes - one.bytes == 7 * tensor(one.T * preset_config(preset).d_model, 4), preset);
  }
  const Measured two = activation_bytes("tiny_gr00t", 2, Recompute::full),
                 eight = activation_bytes("tiny_gr00t", 8, Recompute::full);
  BOOST_TEST(eight.bytes - two.bytes == 6 * tensor(two.T * preset_config("tiny_gr00t").d_model, 4));
}

// Full recompute against none with one block: the block's kept input is all it adds, since the
// backward re-runs the block in place on that input (no second [T, D] buffer to run it in).
BOOST_AUTO_TEST_CASE(full_recompute_reruns_a_block_in_its_kept_input) {
  for (const char* preset : {"tiny_wan", "tiny_dreamzero"}) {
    const Measured none = activation_bytes(preset, 1, Recompute::none), full = activation_bytes(preset, 1, Recompute::full);
    BOOST_TEST(full.bytes - none.bytes == tensor(full.T * preset_config(preset).d_model, 4), preset);
  }
}

namespace {

// The gradient scratch of `layers` blocks of `preset` (plan_block_scratch) in bf16, for T query
// and Tc context tokens.
size_t scratch_bytes(const std::string& preset, int layers, int64_t T, int64_t Tc) {
  const ModelConfig cfg = preset_config(preset);
  ParamRegistry reg;
  std::vector<BlockSpec> specs;
  for (int l = 0; l < layers; ++l) {
    reg.begin_unit(str("blocks.", l));
    specs.push_back(cfg.family == Family::wan ? add_wan_block(reg, l, cfg) : add_gr00t_block(reg, l, cfg));
  }
  std::vector<const BlockSpec*> pointers;
  for (const BlockSpec& s : specs) pointers.push_back(&s);
  ActivationPlan plan(nullptr, DType::bf16);
  BlockScratch scratch;
  plan_block_scratch(pointers, T, Tc, 0, plan, scratch);
  return plan.bytes();
}

}  // namespace

// The scratch holds only what some block reads. wan (ada6, qk_norm, no dropout): dmod [T, 6D],
// dh, dy, datt, dq, dk, dv, dq_pre, dk_pre [T, D], dg [T, F] and the context's gradient in bf16
// [Tc, D]. gr00t (ada2, dropout, no qk_norm): dmod and dmod_rows [T, 2D], six [T, D], dg [T, F],
// ddrop [T, F] and the conditioning's gradient in bf16 [n_cond ≤ T, D].
BOOST_AUTO_TEST_CASE(block_scratch_holds_what_the_blocks_read) {
  const int64_t T = 100, Tc = 30;
  const ModelConfig wan = preset_config("tiny_wan"), gr00t = preset_config("tiny_gr00t");
  const int64_t D = wan.d_model, F = wan.d_ff;
  BOOST_TEST(scratch_bytes("tiny_wan", 2, T, Tc) ==
             tensor(T * 6 * D, 2) + 8 * tensor(T * D, 2) + tensor(T * F, 2) + tensor(Tc * D, 2));
  const int64_t Dg = gr00t.d_model, Fg = gr00t.d_ff;
  BOOST_TEST(scratch_bytes("tiny_gr00t", 2, T, Tc) ==
             2 * tensor(T * 2 * Dg, 2) + 6 * tensor(T * Dg, 2) + 2 * tensor(T * Fg, 2) + tensor(T * Dg, 2));
}
