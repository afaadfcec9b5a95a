// The dropout kernels (kernels/cpu/dropout.hpp) and their keep rule (kernels/dropout_keep.hpp):
// the mask belongs to (seed, step, sample, site, token, column), never to where a row sits in a
// micro-batch; forward and backward apply the same mask; about 1 − p of the elements survive,
// scaled by 1/(1 − p).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "kernel_check.hpp"
#include "kernels/cpu/dropout.hpp"
#include "kernels/dropout_keep.hpp"

using namespace emb;
using namespace emb::test;

namespace {

// Rows of two samples (ids 7 and 40) in a shuffled token order, and a padding row.
struct Rows {
  std::vector<int32_t> seq = {0, 1, 0, -1, 1, 0, 1};
  std::vector<int32_t> token = {2, 0, 0, 0, 1, 1, 2};
  std::vector<int64_t> sample_id = {7, 40};
  DropoutRows rows() const { return {seq.data(), token.data(), sample_id.data()}; }
  int64_t n() const { return int64_t(seq.size()); }
};

constexpr int kC = 37;  // rows start inside a Philox block of four

std::vector<float> forward(const std::vector<float>& x, const Rows& r, const DropoutConfig& cfg) {
  std::vector<float> y(x.size());
  cpu::dropout_forward(x.data(), y.data(), r.n(), kC, cfg, r.rows());
  return y;
}

}  // namespace

BOOST_AUTO_TEST_CASE(dropout_forward_is_the_keep_rule_scaled) {
  const Rows r;
  const DropoutConfig cfg{0.2f, 11, 3, 5};
  const auto x = random_floats(size_t(r.n() * kC), 1);
  const std::vector<float> y = forward(x, r, cfg);
  const uint32_t threshold = dropout_threshold(cfg.p);
  for (int64_t i = 0; i < r.n(); ++i)
    for (int c = 0; c < kC; ++c) {
      const size_t e = size_t(i * kC + c);
      if (r.seq[i] < 0) {
        BOOST_TEST(y[e] == x[e]);  // padding passes through
        continue;
      }
      const bool keep = dropout_keep(cfg, threshold, r.sample_id[r.seq[i]], uint64_t(r.token[i]) * kC + c);
      BOOST_TEST(y[e] == (keep ? x[e] * 1.25f : 0.0f), "row " << i << " col " << c);
    }
  std::vector<float> in_place = x;
  cpu::dropout_forward(in_place.data(), in_place.data(), r.n(), kC, cfg, r.rows());
  BOOST_TEST(in_place == y);
}

// The backward is the forward's transpose: d/dx Σ w·dropout(x) = dropout applied to w (checked by
// central differences), accumulated into dx.
BOOST_AUTO_TEST_CASE(dropout_backward_is_the_gradient) {
  const Rows r;
  const DropoutConfig cfg{0.3f, 12, 4, 6};
  const auto x = random_floats(size_t(r.n() * kC), 2), w = random_floats(x.size(), 3), dx0 = random_floats(x.size(), 4);
  std::vector<float> dx = dx0;
  cpu::dropout_backward(w.data(), dx.data(), r.n(), kC, cfg, r.rows());
  std::vector<double> xd = to_double(x);
  auto loss = [&] {
    std::vector<float> xf(xd.begin(), xd.end());
    const std::vector<float> y = forward(xf, r, cfg);
    return weighted_sum(std::vector<double>(y.begin(), y.end()), w);
  };
  check_close(added(dx, dx0), numeric_grad(loss, xd, 1e-2), 1e-4, 1e-6, "dropout dx");  // differences of an fp32 forward
}

// A row's mask is its (sample, token)'s wherever the row sits, so packing, micro-batches and ranks
// draw the same masks; every key part (seed, step, site, sample, token) changes it.
BOOST_AUTO_TEST_CASE(dropout_mask_is_keyed_by_sample_and_token_not_row) {
  Rows r;
  const DropoutConfig cfg{0.5f, 13, 5, 7};
  const auto x = random_floats(size_t(r.n() * kC), 5, 1.0f, 2.0f);  // nonzero, so y = 0 means dropped
  const std::vector<float> y = forward(x, r, cfg);
  Rows reversed;
  std::reverse(reversed.seq.begin(), reversed.seq.end());
  std::reverse(reversed.token.begin(), reversed.token.end());
  std::vector<float> x_rev(x.size());
  for (int64_t i = 0; i < r.n(); ++i)
    std::copy_n(&x[size_t((r.n() - 1 - i) * kC)], kC, &x_rev[size_t(i * kC)]);
  const std::vector<float> y_rev = forward(x_rev, reversed, cfg);
  for (int64_t i = 0; i < r.n(); ++i)
    for (int c = 0; c < kC; ++c) BOOST_TEST(y_rev[size_t(i * kC + c)] == y[size_t((r.n() - 1 - i) * kC + c)]);

  auto dropped = [&](const std::vector<float>& out) {
    std::vector<bool> d;
    for (float v : out) d.push_back(v == 0.0f);
    return d;
  };
  const std::vector<bool> base = dropped(y);
  for (DropoutConfig other : {DropoutConfig{0.5f, 14, 5, 7}, DropoutConfig{0.5f, 13, 6, 7}, DropoutConfig{0.5f, 13, 5, 8}})
    BOOST_TEST((dropped(forward(x, r, other)) != base));
  Rows other_sample;
  other_sample.sample_id = {8, 40};
  BOOST_TEST((dropped(forward(x, other_sample, cfg)) != base));
}

BOOST_AUTO_TEST_CASE(dropout_keeps_one_minus_p) {
  const int64_t N = 64;
  const int C = 1000;
  std::vector<int32_t> seq(N), token(N);
  for (int64_t i = 0; i < N; ++i) seq[size_t(i)] = int32_t(i % 2), token[size_t(i)] = int32_t(i / 2);
  const std::vector<int64_t> ids = {3, 99};
  const std::vector<float> x(size_t(N * C), 1.0f);
  for (float p : {0.0f, 0.2f, 0.5f}) {
    std::vector<float> y(x.size());
    cpu::dropout_forward(x.data(), y.data(), N, C, DropoutConfig{p, 21, 1, 0}, {seq.data(), token.data(), ids.data()});
    const double kept = double(std::count_if(y.begin(), y.end(), [](float v) { return v != 0.0f; })) / double(y.size());
    BOOST_TEST(std::fabs(kept - (1.0 - p)) < 0.01, "p " << p << ": kept " << kept);
    BOOST_TEST(*std::max_element(y.begin(), y.end()) == float(1.0 / (1.0 - p)));
  }
}
