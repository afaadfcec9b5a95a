#include <boost/test/unit_test.hpp>

#include "kernel_check.hpp"
#include "kernels/cpu/norm.hpp"

using namespace emb;
using namespace emb::test;

namespace {

struct NormRef {
  std::vector<double> y, mean, rstd;
};

// Layer norm (rms = false) or RMS norm (rms = true) in double; empty weight/bias = none. LayerNorm
// runs at GR00T-N1.5's eps (1e-5), RMSNorm at its fixed one.
constexpr float kLayerNormEps = 1e-5f;

NormRef norm_ref(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b, int64_t N,
                 int C, bool rms) {
  NormRef r{std::vector<double>(N * C), std::vector<double>(N), std::vector<double>(N)};
  for (int64_t i = 0; i < N; ++i) {
    double mu = 0.0, ms = 0.0;
    for (int c = 0; c < C; ++c) mu += x[i * C + c] / C;
    if (rms) mu = 0.0;
    for (int c = 0; c < C; ++c) ms += (x[i * C + c] - mu) * (x[i * C + c] - mu) / C;
    r.mean[i] = mu;
    r.rstd[i] = 1.0 / std::sqrt(ms + (rms ? cpu::kNormEps : kLayerNormEps));
    for (int c = 0; c < C; ++c) {
      double v = (x[i * C + c] - mu) * r.rstd[i];
      if (!w.empty()) v *= w[c];
      if (!b.empty()) v += b[c];
      r.y[i * C + c] = v;
    }
  }
  return r;
}

void check_norm(bool rms, bool affine) {
  const int64_t N = 7;
  const int C = 33;
  const auto x = random_floats(N * C, 31, 2.0f, 4.0f);  // a large mean tests the centred variance
  const auto w = random_floats(C, 32, 0.5f, 1.5f), b = random_floats(C, 33);
  const auto w_loss = random_floats(N * C, 34);
  const float* wp = affine ? w.data() : nullptr;
  std::vector<float> y(N * C), mean(N), rstd(N);
  if (rms)
    cpu::rmsnorm_forward(x.data(), wp, y.data(), rstd.data(), N, C);
  else
    cpu::layernorm_forward(x.data(), wp, affine ? b.data() : nullptr, y.data(), mean.data(), rstd.data(), N, C,
                           kLayerNormEps);

  auto xd = to_double(x);
  std::vector<double> wd = affine ? to_double(w) : std::vector<double>{};
  std::vector<double> bd = affine && !rms ? to_double(b) : std::vector<double>{};
  const NormRef ref = norm_ref(xd, wd, bd, N, C, rms);
  check_close(y, ref.y, 1e-5, 0.0, "norm y");
  check_close(rstd, ref.rstd, 1e-5, 0.0, "norm rstd");
  if (!rms) check_close(mean, ref.mean, 1e-6, 0.0, "norm mean");

  const auto dx0 = random_floats(N * C, 35), dw0 = random_floats(C, 36), db0 = random_floats(C, 37);
  auto dx = dx0, dw = dw0, db = db0;
  if (rms)
    cpu::rmsnorm_backward(x.data(), wp, rstd.data(), w_loss.data(), dx.data(), affine ? dw.data() : nullptr, N, C);
  else
    cpu::layernorm_backward(x.data(), wp, mean.data(), rstd.data(), w_loss.data(), dx.data(),
                            affine ? dw.data() : nullptr, affine ? db.data() : nullptr, N, C);
  auto loss = [&] { return weighted_sum(norm_ref(xd, wd, bd, N, C, rms).y, w_loss); };
  check_close(added(dx, dx0), numeric_grad(loss, xd, 1e-5), 1e-4, 1e-6, "norm dx");
  if (affine) {
    check_close(added(dw, dw0), numeric_grad(loss, wd), 1e-4, 1e-6, "norm dweight");
    if (!rms) check_close(added(db, db0), numeric_grad(loss, bd), 1e-4, 1e-6, "norm dbias");
  } else {
    check_close(dw, dw0, 0.0, 0.0, "no weight gradient without affine");
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(layernorm_plain) { check_norm(false, false); }
BOOST_AUTO_TEST_CASE(layernorm_affine) { check_norm(false, true); }
BOOST_AUTO_TEST_CASE(rmsnorm_weighted) { check_norm(true, true); }

BOOST_AUTO_TEST_CASE(layernorm_weight_grad_many_rows) {
  // Enough rows for the threaded column sums; dweight must equal Σ_i dy·x̂ in double.
  const int64_t N = 1500;
  const int C = 48;
  const auto x = random_floats(N * C, 41), w = random_floats(C, 42), dy = random_floats(N * C, 43);
  std::vector<float> y(N * C), mean(N), rstd(N), dw(C, 0.f), db(C, 0.f);
  cpu::layernorm_forward(x.data(), w.data(), nullptr, y.data(), mean.data(), rstd.data(), N, C, kLayerNormEps);
  cpu::layernorm_backward(x.data(), w.data(), mean.data(), rstd.data(), dy.data(), nullptr, dw.data(), db.data(), N,
                          C);
  const NormRef ref = norm_ref(to_double(x), {}, {}, N, C, false);
  std::vector<double> want_w(C, 0.0), want_b(C, 0.0);
  for (int64_t i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c) {
      want_w[c] += dy[i * C + c] * ref.y[i * C + c];
      want_b[c] += dy[i * C + c];
    }
  check_close(dw, want_w, 1e-5, 0.0, "dweight");
  check_close(db, want_b, 1e-5, 0.0, "dbias");
}
