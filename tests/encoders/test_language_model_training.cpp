// model.tune_visual (issue 33): Qwen3's kept layers frozen but in the graph, as upstream trains
// them. At the tiny dimensions of make_tiny_encoders.py (upstream-format random weights), for
// two samples of different lengths and a random upstream gradient of vl:
//  - the forward's vl equals tests/encoders_ref/eagle_reference.py's language_features (each
//    sample alone), and the gradient of the input embeddings equals torch autograd's (float64),
//    within 1e-5 relative on the CPU and 1e-4 on CUDA (under the emulation in CI);
//  - the backward accumulates into the embeddings' gradient (a second one doubles it).
#define BOOST_TEST_MODULE test_language_model_training
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>
#include <random>

#include "encoders/eagle/language_model_training.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "python_reference.hpp"
#ifdef EMBTRAIN_CUDA_KERNELS
#include "kernels/cuda/cuda_ops.hpp"
#include "kernels/cuda_device.hpp"
#endif

using namespace emb;
using namespace emb::encoders;

namespace {

const std::vector<int64_t> kOffsets = {0, 9, 22};  // two samples of 9 and 13 tokens

struct Fixture {
  std::string dir, checkpoint;
  EagleDims dims;
  std::vector<float> embeds, dvl;  // [N, E] each
  std::vector<double> want_vl, want_dembeds;
  Fixture() {
    dir = test::make_temp_dir("language_training");
    BOOST_REQUIRE(std::system(("/usr/bin/python3 " + std::string(PROJECT_SOURCE_DIR) +
                               "/tests/encoders_ref/make_tiny_encoders.py --which eagle --out " + dir + " > /dev/null")
                                  .c_str()) == 0);
    checkpoint = dir + "/eagle";
    const std::string eagle = checkpoint + "/eagle2_hg_model";
    dims = read_eagle_dims(eagle, checkpoint);
    std::mt19937 gen(29);
    std::normal_distribution<float> normal(0.f, 1.f);
    embeds.resize(size_t(kOffsets.back() * dims.llm_hidden)), dvl.resize(embeds.size());
    for (float& e : embeds) e = normal(gen);
    for (float& g : dvl) g = normal(gen);
    test::write_file(dir + "/embeds", test::float_bytes(embeds));
    test::write_file(dir + "/dvl", test::float_bytes(dvl));
    const nlohmann::json result = test::run_python_reference(
        "language_model_grad_reference.py",
        {{"checkpoint", checkpoint}, {"eagle_folder", eagle}, {"embeds", dir + "/embeds"}, {"dvl", dir + "/dvl"},
         {"offsets", kOffsets}, {"out", dir + "/reference"}},
        dir);
    want_vl = test::read_doubles(result["vl"].get<std::string>());
    want_dembeds = test::read_doubles(result["dembeds"].get<std::string>());
  }
};
const Fixture& fixture() {
  static const Fixture f;
  return f;
}

void check_input_gradient(Ops& ops, double tolerance) {
  const Fixture& f = fixture();
  const EagleDims& d = f.dims;
  const int64_t N = kOffsets.back();
  BackendTensors weights_store(ops, DType::f32), memory(ops, DType::f32);
  const EagleWeights w = load_eagle_language_model(WeightSource(f.checkpoint), d, weights_store);
  BOOST_TEST_REQUIRE(w.llm.size() == size_t(d.select_layer));
  const View embeds = memory.upload(f.embeds.data(), N, d.llm_hidden);
  const View dvl = memory.upload(f.dvl.data(), N, d.llm_hidden), dembeds = memory.make(N, d.llm_hidden);
  ops.zero(dembeds);
  LanguageModelTraining llm(ops, d);
  const View vl = llm.forward(w, embeds, kOffsets);
  llm.backward(w, dvl, dembeds);
  const std::vector<float> got_vl = download(ops, vl), got = download(ops, dembeds);
  BOOST_TEST(test::relative_error(got_vl, f.want_vl, 0, got_vl.size()) <= tolerance);
  BOOST_TEST(test::relative_error(got, f.want_dembeds, 0, got.size()) <= tolerance);
  // The embeddings are read, not overwritten: a second backward of the same forward adds again.
  BOOST_TEST(download(ops, embeds) == f.embeds);
  llm.backward(w, dvl, dembeds);
  std::vector<double> doubled(f.want_dembeds.size());
  for (size_t i = 0; i < doubled.size(); ++i) doubled[i] = 2 * f.want_dembeds[i];
  const std::vector<float> twice = download(ops, dembeds);
  BOOST_TEST(test::relative_error(twice, doubled, 0, twice.size()) <= 2 * tolerance);
}

}  // namespace

BOOST_AUTO_TEST_CASE(input_gradient_equals_torch_on_the_cpu) {
  CpuOps cpu;
  check_input_gradient(cpu, 1e-5);
}

#ifdef EMBTRAIN_CUDA_KERNELS
BOOST_AUTO_TEST_CASE(input_gradient_equals_torch_on_cuda) {
  if (!emb::testing::cuda_device_or_skip()) return;
  CudaOps cuda;
  check_input_gradient(cuda, 1e-4);
}
#endif
