// The activation arena's layout at small shapes, byte for byte: what full recompute keeps per
// block, the pool and the gradient scratch the blocks share. --plan reports the same layout
// (Model::activation_bytes), so these are its figures too.
#define BOOST_TEST_MODULE activation_memory
#include <boost/test/unit_test.hpp>

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
