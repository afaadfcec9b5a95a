// encoders/frames/resize (the frozen encoders' frame resampling) against torch 1.13's CPU
// interpolate: the antialiased bilinear resize bit for bit (GR00T truncates its result to
// uint8, so one ulp can move a pixel), downscaling by GR00T's ratios (243 → 224 of a 256
// frame's 0.95 crop, 608 × 456 → 224 of a 640 × 480 one) and upscaling; the plain bilinear and
// bicubic resizes (DreamZero's 160 × 320 and CLIP's 224) to float32 rounding.
#define BOOST_TEST_MODULE test_resize
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "encoders/frames/resize.hpp"
#include "python_reference.hpp"

using namespace emb;
using nlohmann::json;

namespace {

struct Case {
  std::string mode;
  int64_t h, w, c, out_h, out_w;
};

std::vector<float> image(const Case& k, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> u8(0, 255);
  std::vector<float> x(size_t(k.h * k.w * k.c));
  for (float& v : x) v = float(u8(gen)) / 255.0f;  // GR00T's VideoToTensor: u8 / 255 in float32
  return x;
}

std::vector<float> run(const Case& k, const std::vector<float>& x) {
  frames::ResizeTable (*table)(int64_t, int64_t) = k.mode == "aa_bilinear" ? frames::aa_bilinear_table
                                                : k.mode == "bilinear"  ? frames::bilinear_table
                                                                        : frames::bicubic_table;
  std::vector<float> y(size_t(k.out_h * k.out_w * k.c));
  frames::resize_hwc(x.data(), k.c, table(k.h, k.out_h), table(k.w, k.out_w), y.data());
  return y;
}

}  // namespace

BOOST_AUTO_TEST_CASE(resizes_equal_torch) {
  const std::vector<Case> cases = {{"aa_bilinear", 243, 243, 3, 224, 224}, {"aa_bilinear", 456, 608, 3, 224, 224},
                                   {"aa_bilinear", 20, 30, 2, 45, 7},      {"bilinear", 37, 50, 3, 16, 32},
                                   {"bilinear", 9, 11, 1, 20, 23},         {"bicubic", 37, 50, 3, 224, 224},
                                   {"bicubic", 300, 280, 3, 224, 224}};
  json request;
  std::vector<std::vector<float>> inputs;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    inputs.push_back(image(k, uint32_t(100 + i)));
    request["cases"].push_back({{"mode", k.mode}, {"h", k.h}, {"w", k.w}, {"c", k.c}, {"out_h", k.out_h},
                                {"out_w", k.out_w}, {"data", inputs.back()}});
  }
  const json result =
      emb::test::run_python_reference("resize_reference.py", request, emb::test::make_temp_dir("resize"));
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    const std::vector<float> got = run(k, inputs[i]);
    const std::vector<float> want = result["torch"][i].get<std::vector<float>>();
    BOOST_REQUIRE_EQUAL(got.size(), want.size());
    double worst = 0;
    size_t unequal = 0;
    for (size_t e = 0; e < got.size(); ++e) {
      worst = std::max(worst, std::fabs(double(got[e]) - want[e]));
      unequal += got[e] != want[e];
    }
    BOOST_TEST_MESSAGE(k.mode << " " << k.h << "x" << k.w << " -> " << k.out_h << "x" << k.out_w << ": max error "
                              << worst << ", " << unequal << " of " << got.size() << " differ");
    if (k.mode == "aa_bilinear") {
      // Bit-equal to torch's own kernel for GR00T's 0.95 crops of 256 × 256 frames (≤ 4 taps) and
      // to the rules' Python twin everywhere; 640 × 480 crops (5–7 taps) sum in torch's AVX order,
      // within 2 ulp (spec_eagle.md §0.3).
      BOOST_TEST(got == result["rules"][i].get<std::vector<float>>(), k.mode << " " << k.h << "x" << k.w);
      if (k.h == 243) BOOST_TEST(unequal == 0u, k.h << "x" << k.w << ": " << unequal << " differ");
      BOOST_TEST(worst <= 2.4e-7, k.h << "x" << k.w);
    } else {
      BOOST_TEST(worst <= 1e-5, k.mode << " " << k.h << "x" << k.w << ": " << worst);
    }
  }
}
