// model.tune_visual (issue 33): SigLIP and mlp1 trained. At the tiny dimensions of
// make_tiny_encoders.py (upstream-format random weights), for two images and a random upstream
// gradient of the image tokens:
//  - the forward's tokens equal tests/encoders_ref/eagle_reference.py's image_embeddings, and
//    the gradient of every vision and mlp1 tensor equals torch autograd's (float64), within
//    1e-5 relative on the CPU and 1e-4 on CUDA (under the emulation in CI);
//  - the flat layout holds every SigLIP and mlp1 checkpoint tensor once (none of the LLM's, not
//    the unused pooling head), linears as W [in, out];
//  - a second backward accumulates (gradients double).
#define BOOST_TEST_MODULE test_vision_tower_training
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "encoders/eagle/frame_transform.hpp"
#include "encoders/eagle/vision_tower_training.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "python_reference.hpp"
#ifdef EMBTRAIN_CUDA_KERNELS
#include "kernels/cuda/cuda_ops.hpp"
#include "kernels/cuda_device.hpp"
#endif

using namespace emb;
using namespace emb::encoders;
using nlohmann::json;

namespace {

constexpr int64_t kImages = 2;

struct Fixture {
  std::string dir, checkpoint, eagle;
  EagleDims dims;
  std::vector<uint8_t> images;  // [kImages, S, S, 3]
  std::vector<float> dtokens;   // [kImages · T, E]
  std::vector<double> want_tokens, want_grads;
  Fixture() {
    dir = test::make_temp_dir("vision_training");
    BOOST_REQUIRE(std::system(("/usr/bin/python3 " + std::string(PROJECT_SOURCE_DIR) +
                               "/tests/encoders_ref/make_tiny_encoders.py --which eagle --out " + dir + " > /dev/null")
                                  .c_str()) == 0);
    checkpoint = dir + "/eagle", eagle = checkpoint + "/eagle2_hg_model";
    dims = read_eagle_dims(eagle, checkpoint);
    std::mt19937 gen(17);
    images.resize(size_t(kImages * dims.image_size * dims.image_size * 3));
    std::uniform_int_distribution<int> byte(0, 255);
    for (uint8_t& b : images) b = uint8_t(byte(gen));
    dtokens.resize(size_t(kImages * dims.tokens_per_image() * dims.llm_hidden));
    std::normal_distribution<float> normal(0.f, 1.f);
    for (float& g : dtokens) g = normal(gen);
    test::write_file(dir + "/images", std::string(images.begin(), images.end()));
    test::write_file(dir + "/dtokens", test::float_bytes(dtokens));
    json layout = json::array();
    for (const VisionTensorSlot& s : vision_tower_layout(dims))
      layout.push_back({{"name", s.name}, {"transposed", s.transposed}});
    const json result = test::run_python_reference(
        "vision_tower_grad_reference.py",
        {{"checkpoint", checkpoint}, {"eagle_folder", eagle}, {"images", dir + "/images"}, {"n_images", kImages},
         {"dtokens", dir + "/dtokens"}, {"layout", layout}, {"out", dir + "/reference"}},
        dir);
    want_tokens = test::read_doubles(result["tokens"].get<std::string>());
    want_grads = test::read_doubles(result["grads"].get<std::string>());
  }
};
const Fixture& fixture() {
  static const Fixture f;
  return f;
}

std::vector<float> download_all(Ops& ops, const float* p, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n));
  ops.download(out.data(), p, out.size() * sizeof(float));
  return out;
}

// Forward and backward on `ops` against the reference, within `tolerance`, each tensor apart.
void check_gradients(Ops& ops, double tolerance) {
  const Fixture& f = fixture();
  const EagleDims& d = f.dims;
  const int64_t n = kImages * d.tokens_per_image(), elements = vision_tower_elements(d);
  BackendTensors memory(ops, DType::f32);
  const std::vector<float> host_params = read_vision_tower(WeightSource(f.checkpoint), d);
  BOOST_TEST_REQUIRE(int64_t(host_params.size()) == elements);
  const View params = memory.upload(host_params.data(), 1, elements), grads = memory.make(1, elements);
  ops.zero(grads);
  std::vector<float> rows(size_t(n * d.patch_features()));
  eagle_patch_rows(f.images.data(), kImages, d.image_size, d.patch, rows.data());
  const View patch_rows = memory.upload(rows.data(), n, d.patch_features());
  const View dtokens = memory.upload(f.dtokens.data(), n, d.llm_hidden);
  const VisionTowerTensors p = vision_tower_views(params.f32(), d), g = vision_tower_views(grads.f32(), d);
  VisionTowerTraining tower(ops, d);
  const View tokens = tower.forward(p, patch_rows, kImages);
  tower.backward(p, dtokens, g);
  const std::vector<float> got_tokens = download_all(ops, tokens.f32(), n * d.llm_hidden);
  BOOST_TEST(test::relative_error(got_tokens, f.want_tokens, 0, got_tokens.size()) <= tolerance);
  const std::vector<float> got = download_all(ops, grads.f32(), elements);
  BOOST_TEST_REQUIRE(f.want_grads.size() == got.size());
  size_t at = 0;
  for (const VisionTensorSlot& s : vision_tower_layout(d)) {
    const size_t end = at + size_t(s.rows * s.cols);
    const double err = test::relative_error(got, f.want_grads, at, end);
    BOOST_TEST(err <= tolerance, s.name << ": " << err);
    at = end;
  }
  // A second backward of the same forward adds the same gradients again.
  tower.backward(p, dtokens, g);
  const std::vector<float> twice = download_all(ops, grads.f32(), elements);
  std::vector<double> doubled(f.want_grads.size());
  for (size_t i = 0; i < doubled.size(); ++i) doubled[i] = 2 * f.want_grads[i];
  BOOST_TEST(test::relative_error(twice, doubled, 0, twice.size()) <= 2 * tolerance);
}

}  // namespace

BOOST_AUTO_TEST_CASE(layout_holds_the_vision_tensors_once) {
  const EagleDims& d = fixture().dims;
  const std::vector<VisionTensorSlot> layout = vision_tower_layout(d);
  BOOST_TEST(layout.size() == size_t(3 + 16 * d.vision_layers + 4));
  for (const VisionTensorSlot& s : layout) {
    BOOST_TEST(s.name.find("language_model") == std::string::npos);
    BOOST_TEST(s.name.find(".head.") == std::string::npos);
  }
  BOOST_TEST(layout.front().name == "backbone.eagle_model.vision_model.vision_model.embeddings.patch_embedding.weight");
  BOOST_TEST((layout.front().rows == d.patch_features() && layout.front().cols == d.vision_hidden));
  BOOST_TEST(layout.back().name == "backbone.eagle_model.mlp1.0.bias");
  const VisionTensorSlot& mlp1 = layout[layout.size() - 2];
  BOOST_TEST((mlp1.transposed && mlp1.rows == d.vision_hidden && mlp1.cols == d.llm_hidden));
}

BOOST_AUTO_TEST_CASE(gradients_equal_torch_on_the_cpu) {
  CpuOps cpu;
  check_gradients(cpu, 1e-5);
}

#ifdef EMBTRAIN_CUDA_KERNELS
BOOST_AUTO_TEST_CASE(gradients_equal_torch_on_cuda) {
  if (!emb::testing::cuda_device_or_skip()) return;
  CudaOps cuda;
  check_gradients(cuda, 1e-4);
}
#endif
