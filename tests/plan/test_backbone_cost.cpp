// The planner's cost of GR00T-N1.5's backbone (plan/backbone_cost, issue 33) at the released
// dimensions: the prompt lengths the real tokenizer gives, the FLOPs of spec_eagle.md §9
// (0.220 TFLOP per image, 1.22 GFLOP per LLM token at 300 tokens) against an independent
// count here, the time at the hardware's bf16 rates, and the bf16 weights of every tensor the
// backbone reads.
#define BOOST_TEST_MODULE test_backbone_cost
#include <boost/test/unit_test.hpp>

#include "encoders/eagle/eagle_weights.hpp"
#include "plan/backbone_cost.hpp"

using namespace emb;

BOOST_AUTO_TEST_CASE(released_backbone_per_sample) {
  const encoders::EagleDims d;  // released: SigLIP 1152 x 27, Qwen3 2048 x 12 (16/8 heads of 128)
  // tests/encoders/test_eagle_backbone's prompts: 1 view + 12 instruction tokens, 2 + 3, 3 + 0.
  BOOST_TEST(eagle_prompt_tokens(d, 1, 12) == 294);
  BOOST_TEST(eagle_prompt_tokens(d, 2, 3) == 548);
  BOOST_TEST(eagle_prompt_tokens(d, 3, 0) == 808);

  Hardware hw;
  hw.gemm_bf16 = 7e14, hw.attention_bf16 = 3.35e14;
  const BackboneCost one = eagle_backbone_cost(hw, d, 1, 300);
  // Per image: patch GEMM 256·588·1152, 27 layers of 4 square and 2 MLP GEMMs and 256² attention,
  // mlp1 — 2 FLOPs per multiply-add.
  const double image = 2.0 * 256 * 588 * 1152 + 27 * (2.0 * 256 * (4.0 * 1152 * 1152 + 2.0 * 1152 * 4304) +
                                                      4.0 * 256 * 256 * 1152) + 2.0 * 256 * 1152 * 2048;
  BOOST_TEST(one.vision_flops == image, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(image / 1e12 == 0.220, boost::test_tools::tolerance(0.005));
  // Per token: q (2048·2048), k, v (2048·1024 each), o (2048·2048), gate, up, down (2048·6144 each),
  // and causal attention over the tokens before it.
  double llm = 0;
  for (int t = 0; t < 300; ++t)
    llm += 12 * (2.0 * (2048.0 * 2048 * 2 + 2048.0 * 1024 * 2 + 3 * 2048.0 * 6144) + 4.0 * 2048 * (t + 1));
  BOOST_TEST(one.llm_flops == llm, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(one.llm_flops / 300 / 1e9 == 1.22, boost::test_tools::tolerance(0.01));
  const double attention = 27 * 4.0 * 256 * 256 * 1152 + 12 * 2.0 * 2048 * 300 * 301;
  BOOST_TEST(one.attention_flops == attention, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(one.forward_s == (image + llm - attention) / 7e14 + attention / 3.35e14,
             boost::test_tools::tolerance(1e-12));
  // Two views: twice the vision tower, a longer prompt.
  const BackboneCost two = eagle_backbone_cost(hw, d, 2, 563);
  BOOST_TEST(two.vision_flops == 2 * image, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(two.llm_flops > one.llm_flops * 563 / 300);
  // The bf16 weights of exactly the tensors the backbone reads.
  double params = 0;
  for (const auto& [name, shape] : encoders::eagle_tensor_shapes(d)) {
    double n = 1;
    for (int64_t s : shape) n *= double(s);
    params += n;
  }
  BOOST_TEST(one.weight_bytes == 2 * params, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(params / 1e6 == 1329.5, boost::test_tools::tolerance(0.001));  // spec §8 without SigLIP's 15.2 M head
}
