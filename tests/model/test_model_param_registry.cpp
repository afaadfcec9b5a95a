// ParamRegistry::init_range: any flat range [begin, end) gets bit for bit the values a full
// init() writes there (random ranges, ranges across tensor boundaries, single elements, empty
// ranges), writes nothing outside it, and rejects ranges outside the buffer.
#define BOOST_TEST_MODULE model_param_registry
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"

using namespace emb;

namespace {

constexpr uint64_t kSeed = 11;
constexpr double kStd = 0.02;
constexpr float kUntouched = -12345.0f;

// init_range over [begin, end) into a buffer with a guard element either side.
std::vector<float> init_range_guarded(const ParamRegistry& reg, int64_t begin, int64_t end) {
  std::vector<float> out(size_t(end - begin + 2), kUntouched);
  reg.init_range(out.data() + 1, begin, end, kSeed, kStd);
  return out;
}

// The ranges checked on `reg`: every tensor boundary crossed, each tensor whole, single
// elements and empty ranges at boundaries, the whole buffer, and random ranges.
std::vector<std::pair<int64_t, int64_t>> test_ranges(const ParamRegistry& reg) {
  const int64_t total = reg.total();
  std::vector<std::pair<int64_t, int64_t>> ranges = {{0, total}, {0, 0}, {total, total}, {0, 1}, {total - 1, total}};
  for (const ParamInfo& p : reg.all()) {
    const int64_t lo = p.offset, hi = p.offset + p.numel;
    ranges.push_back({lo, hi});
    ranges.push_back({lo, lo});
    ranges.push_back({hi - 1, hi});
    ranges.push_back({std::max<int64_t>(0, lo - 3), std::min(total, lo + 5)});
    ranges.push_back({lo + p.numel / 2, std::min(total, hi + 7)});  // into the next tensors
  }
  const CounterRng rng(kSeed, RngStream::test, 0);
  for (uint64_t i = 0; i < 200; ++i) {
    int64_t a = int64_t(rng.bits(2 * i) % uint64_t(total + 1)), b = int64_t(rng.bits(2 * i + 1) % uint64_t(total + 1));
    ranges.push_back({std::min(a, b), std::max(a, b)});
  }
  return ranges;
}

void check_ranges(const std::string& preset) {
  auto model = make_model(preset_config(preset), nullptr);
  const ParamRegistry& reg = model->params();
  std::vector<float> full(size_t(reg.total()));
  reg.init(full.data(), kSeed, kStd);
  for (auto [begin, end] : test_ranges(reg)) {
    BOOST_TEST_CONTEXT(preset << " range [" << begin << ", " << end << ")") {
      const std::vector<float> out = init_range_guarded(reg, begin, end);
      BOOST_TEST(std::memcmp(out.data() + 1, full.data() + begin, size_t(end - begin) * sizeof(float)) == 0);
      BOOST_TEST(out.front() == kUntouched);
      BOOST_TEST(out.back() == kUntouched);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(gr00t_ranges_equal_full_init) { check_ranges("tiny_gr00t"); }
BOOST_AUTO_TEST_CASE(wan_ranges_equal_full_init) { check_ranges("tiny_wan"); }

// Independent of how init_range walks the tensors: a normal tensor's element i is draw i of
// the tensor's own stream, and ones/zeros tensors are constant.
BOOST_AUTO_TEST_CASE(values_are_the_documented_draws) {
  auto model = make_model(preset_config("tiny_wan"), nullptr);
  const ParamRegistry& reg = model->params();
  int checked[3] = {0, 0, 0};
  for (int t = 0; t < reg.size(); ++t) {
    const ParamInfo& p = reg[t];
    const int64_t i = p.numel / 3;
    const std::vector<float> out = init_range_guarded(reg, p.offset + i, p.offset + i + 1);
    float want = p.init == ParamInit::ones ? 1.0f : 0.0f;
    if (p.init == ParamInit::normal)
      want = float(kStd * CounterRng(kSeed, RngStream::init, uint64_t(t)).normal(uint64_t(i)));
    BOOST_TEST(out[1] == want, p.name);
    checked[int(p.init)] += 1;
  }
  for (int n : checked) BOOST_TEST(n > 0);  // every kind of initialisation was seen
}

BOOST_AUTO_TEST_CASE(ranges_outside_the_buffer_throw) {
  auto model = make_model(preset_config("tiny_gr00t"), nullptr);
  const ParamRegistry& reg = model->params();
  std::vector<float> out(4);
  BOOST_CHECK_THROW(reg.init_range(out.data(), -1, 2, kSeed, kStd), Error);
  BOOST_CHECK_THROW(reg.init_range(out.data(), 3, 2, kSeed, kStd), Error);
  BOOST_CHECK_THROW(reg.init_range(out.data(), reg.total() - 1, reg.total() + 1, kSeed, kStd), Error);
}
