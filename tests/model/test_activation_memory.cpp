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
  return {make_model(cfg, nullptr)->activation_bytes(b, DType::f32).total, b.n_tokens, b.n_context};
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

namespace {

// One wan sample's tokens as activation_rows reads them: `clean` clean video tokens, then
// `noisy` noisy video and `actions` action tokens in block 0 and `actions_next` in block 1, and
// Tc context tokens (no data: the plan reads only the token kinds and blocks).
PackedBatch wan_tokens(int clean, int noisy, int actions, int actions_next, int64_t Tc) {
  PackedBatch b;
  b.family = "wan";
  b.n_samples = 1, b.n_context = Tc;
  auto push = [&](int n, int32_t kind, int32_t blk) {
    for (int i = 0; i < n; ++i) b.seq.push_back(0), b.kind.push_back(kind), b.blk.push_back(blk);
  };
  push(clean, kClean, 0), push(noisy, kNoisyVideo, 0), push(actions, kAction, 0), push(actions_next, kAction, 1);
  b.n_tokens = int64_t(b.seq.size());
  return b;
}

}  // namespace

// The encoders' and the head's tensors are sized by the rows they run on (activation_rows), not
// by all query tokens. With row counts that keep every tensor a multiple of 64 bytes, moving 16
// tokens from noisy video to actions changes the bytes by exactly 16 rows of each kind, and a
// second timestep by exactly one time row (fp32: no bf16 copy of the conditioning).
BOOST_AUTO_TEST_CASE(wan_encoders_and_head_hold_rows_of_their_kind) {
  const ModelConfig cfg = preset_config("tiny_wan");
  std::unique_ptr<Model> m = make_model(cfg, nullptr);
  auto bytes = [&](const PackedBatch& b) { return int64_t(m->activation_bytes(b, DType::f32).total); };
  const int64_t D = cfg.d_model, A = cfg.action_dim, Dh = cfg.d_hidden_enc, Po = cfg.patch_dim_out();
  const int64_t P = cfg.embed_patch_dim();
  // action_enc 8 [D] and 2 [2D]; a_t [2]; ain, ya, dya [A]; xa, dxa [D]; d1, d1r, dd1r [Dh].
  const int64_t action_row = 4 * (8 * D + 2 * 2 * D + 2 + 3 * A + 2 * D + 3 * Dh);
  // hx, hln, hm, dhx, dhm, dhsum [D]; yv, dyv [Po]; hmean, hrstd; hmod, dhmod [2D].
  const int64_t noisy_row = 4 * (6 * D + 2 * Po + 2 + 2 * 2 * D);
  const int64_t video_row = 4 * (2 * D + P);  // vemb, dvemb [D]; vin [P]
  // time_enc's sinusoid [256] and 7 [D]; tp, dtp [6D].
  const int64_t time_row = 4 * (256 + 7 * D + 2 * 6 * D);
  const int64_t before = bytes(wan_tokens(32, 32, 16, 0, 32));
  BOOST_TEST(bytes(wan_tokens(32, 16, 32, 0, 32)) - before == 16 * (action_row - noisy_row - video_row));
  BOOST_TEST(bytes(wan_tokens(32, 32, 0, 16, 32)) - before == time_row);
}

// The run plans its arena for the same rows as --plan: after a step on a DreamZero-layout batch
// (clean and noisy video, actions, states, the CLIP context) its capacity is --plan's bytes
// rounded up to the arena's 4 KiB.
BOOST_AUTO_TEST_CASE(the_run_allocates_what_plan_measures) {
  for (const char* preset : {"tiny_dreamzero", "tiny_gr00t"}) {
    TinyModel m(preset);
    const PackedBatch b = make_synthetic_batch(m.model->config(), sample_ids(3), true, kSeed);
    m.grads(b);
    const size_t planned = make_model(m.model->config(), nullptr)->activation_bytes(b, DType::f32).total;
    BOOST_TEST(m.model->activation_arena_bytes() == ((planned + 4095) & ~size_t(4095)), preset);
  }
}
