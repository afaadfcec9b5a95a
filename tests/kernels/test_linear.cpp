#include <boost/test/unit_test.hpp>

#include "core/error.hpp"
#include "kernel_check.hpp"
#include "kernels/cpu/linear.hpp"

using namespace emb;
using namespace emb::test;

namespace {

// y = x W + b in double, row i using slot emb[i] of W/b (emb null: slot 0).
std::vector<double> linear_ref(const std::vector<double>& x, const std::vector<double>& W,
                               const std::vector<double>& b, const int32_t* emb, int64_t N, int in, int out) {
  std::vector<double> y(N * out);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t e = emb ? emb[i] : 0;
    for (int o = 0; o < out; ++o) {
      double s = b[e * out + o];
      for (int k = 0; k < in; ++k) s += x[i * in + k] * W[(e * in + k) * out + o];
      y[i * out + o] = s;
    }
  }
  return y;
}

// Checks forward against the double reference and the accumulated backward against
// numerical gradients of it, for the plain (emb null) or the per-embodiment linear.
void check_linear(const std::vector<int32_t>& emb_ids, int E, int in, int out) {
  const int64_t N = static_cast<int64_t>(emb_ids.size());
  const int32_t* emb = E > 0 ? emb_ids.data() : nullptr;
  const int slots = std::max(E, 1);
  const auto x = random_floats(N * in, 1), W = random_floats(slots * in * out, 2), b = random_floats(slots * out, 3);
  const auto w_loss = random_floats(N * out, 4);

  std::vector<float> y(N * out);
  if (emb)
    cpu::linear_emb_forward(x.data(), W.data(), b.data(), emb, y.data(), N, in, out, E);
  else
    cpu::linear_forward(x.data(), W.data(), b.data(), y.data(), N, in, out);
  auto xd = to_double(x), Wd = to_double(W), bd = to_double(b);
  check_close(y, linear_ref(xd, Wd, bd, emb, N, in, out), 1e-5, 0.0, "linear forward");

  const auto dx0 = random_floats(x.size(), 5), dW0 = random_floats(W.size(), 6), db0 = random_floats(b.size(), 7);
  auto dx = dx0, dW = dW0, db = db0;
  if (emb)
    cpu::linear_emb_backward(x.data(), W.data(), emb, w_loss.data(), dx.data(), dW.data(), db.data(), N, in, out, E);
  else
    cpu::linear_backward(x.data(), W.data(), w_loss.data(), dx.data(), dW.data(), db.data(), N, in, out);
  auto loss = [&] { return weighted_sum(linear_ref(xd, Wd, bd, emb, N, in, out), w_loss); };
  check_close(added(dx, dx0), numeric_grad(loss, xd), 1e-4, 1e-6, "linear dx");
  check_close(added(dW, dW0), numeric_grad(loss, Wd), 1e-4, 1e-6, "linear dW");
  check_close(added(db, db0), numeric_grad(loss, bd), 1e-4, 1e-6, "linear db");
}

}  // namespace

BOOST_AUTO_TEST_CASE(linear_matches_double_reference) { check_linear(std::vector<int32_t>(37, 0), 0, 19, 23); }

BOOST_AUTO_TEST_CASE(linear_emb_matches_double_reference) {
  // Embodiment 2 of 4 is unused; the others interleave so grouping must gather and scatter.
  check_linear({3, 0, 0, 1, 3, 3, 0, 1, 1, 0, 3, 0, 1, 3, 0, 0, 1}, 4, 11, 13);
}

BOOST_AUTO_TEST_CASE(linear_emb_grouped_equals_per_row_loop) {
  const int in = 24, out = 40, E = 3;
  const std::vector<int32_t> emb = {2, 2, 0, 1, 0, 2, 1, 1, 0, 2, 0, 0, 1};
  const int64_t N = static_cast<int64_t>(emb.size());
  const auto x = random_floats(N * in, 11), W = random_floats(E * in * out, 12), b = random_floats(E * out, 13);
  const auto dy = random_floats(N * out, 14);
  std::vector<float> y(N * out), dx(N * in, 0.f), dW(W.size(), 0.f), db(b.size(), 0.f);
  cpu::linear_emb_forward(x.data(), W.data(), b.data(), emb.data(), y.data(), N, in, out, E);
  cpu::linear_emb_backward(x.data(), W.data(), emb.data(), dy.data(), dx.data(), dW.data(), db.data(), N, in, out, E);

  std::vector<float> y_row(N * out), dx_row(N * in, 0.f), dW_row(W.size(), 0.f), db_row(b.size(), 0.f);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t e = emb[i];
    cpu::linear_forward(&x[i * in], &W[e * in * out], &b[e * out], &y_row[i * out], 1, in, out);
    cpu::linear_backward(&x[i * in], &W[e * in * out], &dy[i * out], &dx_row[i * in], &dW_row[e * in * out],
                         &db_row[e * out], 1, in, out);
  }
  check_close(y, y_row, 1e-6, 0.0, "grouped y");
  check_close(dx, dx_row, 1e-6, 0.0, "grouped dx");
  check_close(dW, dW_row, 1e-5, 0.0, "grouped dW");
  check_close(db, db_row, 1e-5, 0.0, "grouped db");
}

BOOST_AUTO_TEST_CASE(linear_emb_rejects_out_of_range_id) {
  const std::vector<int32_t> emb = {0, 2};
  std::vector<float> x(4, 1.f), W(2 * 2 * 3, 1.f), y(6);
  BOOST_CHECK_THROW(cpu::linear_emb_forward(x.data(), W.data(), nullptr, emb.data(), y.data(), 2, 2, 3, 2),
                    emb::Error);
}

BOOST_AUTO_TEST_CASE(linear_null_bias_and_null_grads) {
  const int64_t N = 5;
  const int in = 3, out = 4;
  const auto x = random_floats(N * in, 21), W = random_floats(in * out, 22), dy = random_floats(N * out, 23);
  std::vector<float> y(N * out);
  cpu::linear_forward(x.data(), W.data(), nullptr, y.data(), N, in, out);
  const std::vector<double> zero_b(out, 0.0);
  check_close(y, linear_ref(to_double(x), to_double(W), zero_b, nullptr, N, in, out), 1e-5, 0.0, "no bias");
  std::vector<float> dW(in * out, 0.f);
  cpu::linear_backward(x.data(), W.data(), dy.data(), nullptr, dW.data(), nullptr, N, in, out);
  std::vector<double> want(in * out, 0.0);
  for (int64_t i = 0; i < N; ++i)
    for (int k = 0; k < in; ++k)
      for (int o = 0; o < out; ++o) want[k * out + o] += double(x[i * in + k]) * dy[i * out + o];
  check_close(dW, want, 1e-5, 0.0, "dW only");
}
