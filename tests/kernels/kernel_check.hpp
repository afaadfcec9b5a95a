// Shared helpers of the CPU kernel tests: seeded random tensors, numerical gradients of double
// references by central differences, and norm-wise comparisons.
#pragma once
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace emb::test {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

inline std::vector<float> random_normals(size_t n, uint32_t seed, float stddev = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// d loss / d x[i] for every i by central differences; loss() reads x.
inline std::vector<double> numeric_grad(const std::function<double()>& loss, std::vector<double>& x,
                                        double eps = 1e-6) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + eps;
    const double up = loss();
    x[i] = keep - eps;
    const double down = loss();
    x[i] = keep;
    g[i] = (up - down) / (2 * eps);
  }
  return g;
}

// Σ w·y: the scalar whose gradient the backward kernels are checked on.
inline double weighted_sum(const std::vector<double>& y, const std::vector<float>& w) {
  double s = 0.0;
  for (size_t i = 0; i < y.size(); ++i) s += y[i] * w[i];
  return s;
}

// Passes when max|got − want| ≤ rtol·max|want| + atol.
template <class Got, class Want>
void check_close(const Got& got, const Want& want, double rtol, double atol, const std::string& what) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  double scale = 0.0, err = 0.0;
  size_t worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(double(want[i])));
    const double e = std::fabs(double(got[i]) - double(want[i]));
    if (e > err) err = e, worst = i;
  }
  BOOST_TEST(err <= rtol * scale + atol, what << ": max error " << err << " at " << worst << " (got "
                                              << double(got[worst]) << ", want " << double(want[worst])
                                              << ", scale " << scale << ")");
}

// got − before: what an accumulating backward added to a pre-filled buffer.
inline std::vector<double> added(const std::vector<float>& got, const std::vector<float>& before) {
  std::vector<double> d(got.size());
  for (size_t i = 0; i < got.size(); ++i) d[i] = double(got[i]) - double(before[i]);
  return d;
}

}  // namespace emb::test
