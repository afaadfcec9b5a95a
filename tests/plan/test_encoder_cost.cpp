// The planner's cost of DreamZero's frozen encoders (plan/encoder_cost, issue 34) at the released
// dimensions: the FLOPs against tests/encoders_ref's counts (wan_vae_reference.encoder_ops,
// umt5_reference.flops_per_token, clip_reference.flops_per_image: spec_dreamzero_encoders.md §7),
// the time at the hardware's bf16 rates, the bf16 weights of every tensor the encoders read, and
// the sample a wan model's deck gives them.
#define BOOST_TEST_MODULE test_encoder_cost
#include <boost/test/unit_test.hpp>

#include "model/presets.hpp"
#include "plan/encoder_cost.hpp"

using namespace emb;
using encoders::VaeDims;

BOOST_AUTO_TEST_CASE(vae_flops_equal_the_reference_count) {
  // wan_vae_reference.encoder_ops summed (exact integers).
  BOOST_TEST(vae_encoder_flops(VaeDims::wan21(), 33, 352, 640).total == 37736332001280.0);
  BOOST_TEST(vae_encoder_flops(VaeDims::wan21(), 1, 352, 640).total == 1518689976320.0);
  BOOST_TEST(vae_encoder_flops(VaeDims::wan21(), 5, 176, 320).total == 1504336936960.0);
  BOOST_TEST(vae_encoder_flops(VaeDims::wan22(), 33, 160, 320).total == 5957972377600.0);
  BOOST_TEST(vae_encoder_flops(VaeDims::wan22(), 33, 176, 320).total == 6553870991360.0);
  // The middle block's attention: 9 latent frames of 44 × 80 positions, C 384: scores and values.
  const double n = 44.0 * 80;
  BOOST_TEST(vae_encoder_flops(VaeDims::wan21(), 33, 352, 640).attention == 9 * 4 * n * n * 384);
}

BOOST_AUTO_TEST_CASE(released_encoders_per_sample) {
  Hardware hw;
  hw.gemm_bf16 = 7e14, hw.attention_bf16 = 3.35e14;
  EncoderSample s;
  s.vae = VaeDims::wan22(), s.frames = 33, s.height = 176, s.width = 320, s.text_rows = 13;
  const EncoderCost c = dreamzero_encoder_cost(hw, s);
  BOOST_TEST(c.vae_flops == 6553870991360.0);
  // umt5_reference.flops_per_token(T5Dims(), L) · L for 13 rows and for upstream's 512 padded ones.
  BOOST_TEST(c.umt5_flops == 120459755520.0);
  BOOST_TEST(c.umt5_padded_flops == 4844723109888.0);
  BOOST_TEST(c.umt5_attention_flops == 24 * 4.0 * 4096 * 13 * 13);
  BOOST_TEST(c.clip_flops == 324143836160.0);  // clip_reference.flops_per_image
  BOOST_TEST(c.clip_attention_flops == 31 * 4.0 * 257 * 257 * 1280);
  BOOST_TEST(c.forward_s == (c.flops() - c.attention_flops()) / 7e14 + c.attention_flops() / 3.35e14,
             boost::test_tools::tolerance(1e-12));
  // bf16 weights: the VAE38 encoder + conv1 149.6 M, umT5-XXL 5.68 B (its 1.05 B embedding
  // included), CLIP's visual tower as used 611 M (spec §6; the unused 32nd block, post_norm and
  // head not read).
  BOOST_TEST(c.weight_bytes / 2 / 1e9 == 0.1496 + 5.68 + 0.611, boost::test_tools::tolerance(0.005));
  // Upstream's work: umT5's 512 padded rows and the y pass, which DreamZero computes on every model.
  BOOST_TEST(c.upstream_flops == 2 * 6553870991360.0 + 4844723109888.0 + 324143836160.0);
  BOOST_TEST(c.upstream_forward_s > c.forward_s);
  // The I2V y pass doubles the VAE's work.
  s.i2v_condition = true;
  BOOST_TEST(dreamzero_encoder_cost(hw, s).vae_flops == 2 * c.vae_flops);
}

BOOST_AUTO_TEST_CASE(the_sample_of_a_wan_deck) {
  // dreamzero5b: 48 latent channels -> VAE38 (/16), no y; 9 latent frames -> 33 frames.
  const ModelConfig m5 = preset_config("dreamzero5b");
  const EncoderSample s5 = dreamzero_encoder_sample(m5, 0, 0, 12);
  BOOST_TEST(int(s5.vae.kind) == int(encoders::VaeKind::wan22));
  BOOST_TEST(!s5.i2v_condition);
  BOOST_TEST(s5.frames == 33);
  BOOST_TEST(s5.height == 30 * 16);
  BOOST_TEST(s5.width == 52 * 16);
  BOOST_TEST(s5.text_rows == 13);
  BOOST_TEST(dreamzero_encoder_sample(m5, 176, 320, 12).height == 176);
  // dreamzero14b: Wan2.1 I2V, 36 input channels for 16 predicted -> Wan2.1's VAE (/8) and y.
  const EncoderSample s14 = dreamzero_encoder_sample(preset_config("dreamzero14b"), 0, 0, 0);
  BOOST_TEST(int(s14.vae.kind) == int(encoders::VaeKind::wan21));
  BOOST_TEST(s14.i2v_condition);
  BOOST_TEST(s14.height == 60 * 8);
}
