// DreamZero's umT5 text encoder (src/encoders/umt5, issue 34) against the torch reference written
// from the upstream modules (tests/encoders_ref/umt5_reference.py, float64, each text padded to 512
// rows with the padding masked, as Wan's T5EncoderModel runs it) at tiny dimensions with random
// upstream-format weights (make_tiny_encoders.py: the real vocabulary and buckets, bf16 as Wan
// publishes): texts of 0 tokens (no rows), 1 (</s> alone), 37, and 512 (what the tokenizer keeps
// of a longer text: 511 + </s>), each alone and all in one pass; on the CPU within 1e-5 and on CUDA
// where there is a device (the emulation in CI) within 1e-4 (fp32) and 3e-2 (bf16). The buckets
// equal exact arithmetic's; bad texts and checkpoints are one line.
#define BOOST_TEST_MODULE test_umt5_encoder
#include <boost/test/unit_test.hpp>

#include <random>

#include "encoders/umt5/umt5_encoder.hpp"
#include "error_of.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "tiny_wan.hpp"
#ifdef EMBTRAIN_CUDA_KERNELS
#include "kernels/cuda/cuda_ops.hpp"
#include "kernels/cuda_device.hpp"
#endif

using namespace emb;
using namespace emb::encoders;
using emb::test::error_of;
using emb::test::tiny_wan;
using nlohmann::json;

namespace {

std::vector<std::vector<int32_t>> texts() {
  std::mt19937 gen(5);
  std::uniform_int_distribution<int32_t> id(2, 256383);
  std::vector<std::vector<int32_t>> t = {{}, {1}, std::vector<int32_t>(37), std::vector<int32_t>(512)};
  for (auto& text : t)
    if (text.size() > 1) {
      for (int32_t& i : text) i = id(gen);
      text.back() = 1;  // </s>
    }
  return t;
}

struct Fixture {
  std::vector<std::vector<double>> want;  // per text
  Fixture() {
    const std::string dir = emb::test::make_temp_dir("t5_ref");
    json jobs = json::array();
    const auto all = texts();
    for (size_t i = 0; i < all.size(); ++i)
      jobs.push_back({{"encoder", "t5"}, {"checkpoint", tiny_wan().t5()}, {"ids", json::array({all[i]})},
                      {"out", dir + "/out" + std::to_string(i)}});
    want = emb::test::run_wan_reference(jobs, dir);
  }
};
const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void check_texts(Ops& ops, DType storage, double tolerance, const std::string& what) {
  Umt5Encoder t5(ops, WeightSource(tiny_wan().t5()), storage);
  const auto all = texts();
  std::vector<double> batched;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::vector<float> got = t5.encode({all[i]});
    BOOST_REQUIRE_EQUAL(got.size(), all[i].size() * size_t(t5.dims().dim));
    batched.insert(batched.end(), fixture().want[i].begin(), fixture().want[i].end());
    if (all[i].empty()) continue;
    const double err = emb::test::normwise_error(got, fixture().want[i]);
    BOOST_TEST_MESSAGE(what << " text of " << all[i].size() << " tokens: error " << err);
    BOOST_TEST(err <= tolerance, what << " text of " << all[i].size() << " tokens: error " << err);
  }
  const double err = emb::test::normwise_error(t5.encode(all), batched);
  BOOST_TEST_MESSAGE(what << " all texts in one pass: error " << err);
  BOOST_TEST(err <= tolerance, what << " all texts in one pass: error " << err);
}

}  // namespace

BOOST_AUTO_TEST_CASE(text_rows_on_the_cpu_equal_the_reference) {
  CpuOps cpu;
  check_texts(cpu, DType::f32, 1e-5, "cpu fp32");
}

#ifdef EMBTRAIN_CUDA_KERNELS
BOOST_AUTO_TEST_CASE(text_rows_on_cuda_equal_the_reference) {
  if (!emb::testing::cuda_device_or_skip()) return;
  CudaOps cuda;
  check_texts(cuda, DType::f32, 1e-4, "cuda fp32");
  check_texts(cuda, DType::bf16, 3e-2, "cuda bf16");
}
#endif

// Upstream's float32 logs give exact arithmetic's buckets (spec §3): the thresholds of buckets
// 8 .. 15 are distances 8, 12, 16, 23, 32, 46, 64, 91; keys after the query add 16.
BOOST_AUTO_TEST_CASE(buckets_are_t5s) {
  const Umt5Dims d;
  const int thresholds[] = {8, 12, 16, 23, 32, 46, 64, 91};
  for (int n = 0; n < 600; ++n) {
    int want = n < 8 ? n : 8;
    for (int k = 1; k < 8; ++k)
      if (n >= thresholds[k]) want = 8 + k;
    BOOST_TEST(umt5_bucket(-n, d) == want, "distance " << n);
    if (n > 0) BOOST_TEST(umt5_bucket(n, d) == 16 + want, "distance +" << n);
  }
}

BOOST_AUTO_TEST_CASE(bad_texts_and_checkpoints_are_one_line) {
  CpuOps cpu;
  Umt5Encoder t5(cpu, WeightSource(tiny_wan().t5()), DType::f32);
  BOOST_TEST(t5.dims().vocab == 256384);
  BOOST_TEST(t5.dims().heads == 2);
  BOOST_TEST(error_of([&] { t5.encode({std::vector<int32_t>(513, 5)}); }) ==
             "umT5 encoder: text 0 has 513 tokens, more than the 512 the tokenizer keeps (it truncates to 511 + </s>)");
  BOOST_TEST(error_of([&] { t5.encode({{3, 256384}}); }) ==
             "umT5 encoder: text 0 token 1 has id 256384 outside the vocabulary of 256384");
  const std::string dir = emb::test::make_temp_dir("t5_bad");
  BOOST_REQUIRE(std::system(("/usr/bin/python3 -c \"import torch; t = torch.load('" + tiny_wan().t5() + "'); "
                             "t['blocks.1.ffn.fc2.weight'] = t['blocks.1.ffn.fc2.weight'][:, :20]; "
                             "torch.save(t, '" + dir + "/misshaped.pth')\"").c_str()) == 0);
  BOOST_TEST(error_of([&] { Umt5Encoder(cpu, WeightSource(dir + "/misshaped.pth"), DType::f32); }) ==
             dir + "/misshaped.pth: umT5 tensor blocks.1.ffn.fc2.weight has shape [16, 20], expected [16, 24] (dim 16 "
                   "and vocab 256384 from token_embedding, dim_attn 16, dim_ffn 24, 32 buckets x 2 heads from block 0, "
                   "2 blocks)");
  BOOST_TEST(error_of([&] { Umt5Encoder(cpu, WeightSource(tiny_wan().vae21()), DType::f32); }) ==
             tiny_wan().vae21() +
                 ": not a umT5 encoder checkpoint (expected token_embedding.weight [vocab, dim], blocks.0.attn.q.weight, "
                 "blocks.0.ffn.fc1.weight and blocks.0.pos_embedding.embedding.weight, as "
                 "models_t5_umt5-xxl-enc-bf16.pth holds)");
}
