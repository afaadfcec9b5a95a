// CpuOps (kernels/cpu/cpu_ops.hpp): bad calls are one-line errors naming the op and the shapes;
// fused calls give bit for bit what the kernels they compose give; the row and flow-matching
// kernels it adds match a double reference and their finite-difference gradients.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>

#include "core/error.hpp"
#include "error_of.hpp"
#include "kernel_check.hpp"
#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/norm.hpp"
#include "kernels/cpu/norm_modulate.hpp"

using namespace emb;
using namespace emb::test;

namespace {

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

BOOST_AUTO_TEST_CASE(cpu_ops_errors_name_the_op_and_the_shapes) {
  CpuOps ops;
  std::vector<float> x(4 * 3), W(5 * 2), y(4 * 2), b(2);
  const std::string linear = error_of([&] {
    ops.linear_forward(view(x.data(), 4, 3), view(W.data(), 5, 2), View{}, Activation::none, View{},
                       view(y.data(), 4, 2));
  });
  BOOST_TEST(linear == "linear_forward: W must be [in, out]; x [4, 3], W [5, 2], b absent, pre absent, y [4, 2]");
  BOOST_TEST(linear.find('\n') == std::string::npos);

  std::vector<float> q(6 * 8), kv(5 * 8), lse(6 * 2);
  std::vector<int32_t> seq(6, 0);
  const AttnIndex idx{AttnMask::full, seq.data(), nullptr, nullptr, seq.data(), nullptr, nullptr, {}};
  const std::string head_dim = error_of([&] {
    ops.attention_forward(view(q.data(), 6, 8), view(kv.data(), 5, 8), view(kv.data(), 5, 8), view(q.data(), 6, 8),
                          view(lse.data(), 6, 2), AttnConfig{2, 3}, idx);
  });
  BOOST_TEST(head_dim.rfind("attention_forward: q must be [Tq, heads·head_dim] with heads 2, head_dim 3; q [6, 8]", 0) ==
             0);

  View bf16 = view(x.data(), 4, 3);
  bf16.dtype = DType::bf16;
  const std::string dtype = error_of([&] { ops.zero(bf16); });
  BOOST_TEST(dtype == "zero: y has dtype bf16, unsupported on this backend; y [4, 3 bf16]");

  const std::string rows = error_of([&] {
    std::vector<int32_t> idx3 = {0, 1, 2};
    ops.copy_rows(view(x.data(), 4, 3), RowIndex{idx3.data(), 3}, view(y.data(), 4, 2), RowIndex{});
  });
  BOOST_TEST(rows == "copy_rows: src and dst differ in columns; src [4, 3], dst [4, 2]");
}

BOOST_AUTO_TEST_CASE(cpu_ops_fused_calls_equal_their_kernels_bit_for_bit) {
  CpuOps ops;
  const int64_t N = 7;
  const int in = 5, out = 6;
  const auto x = random_floats(N * in, 1), W = random_floats(in * out, 2), b = random_floats(out, 3);
  const auto dy = random_floats(N * out, 4);
  std::vector<float> pre(N * out), y(N * out), pre_ref(N * out), y_ref(N * out);
  ops.linear_forward(view(x.data(), N, in), view(W.data(), in, out), view(b.data(), 1, out), Activation::gelu_tanh,
                     view(pre.data(), N, out), view(y.data(), N, out));
  cpu::linear_forward(x.data(), W.data(), b.data(), pre_ref.data(), N, in, out);
  cpu::gelu_tanh_forward(pre_ref.data(), y_ref.data(), N * out);
  BOOST_TEST(bitwise_equal(pre, pre_ref));
  BOOST_TEST(bitwise_equal(y, y_ref));

  std::vector<float> dx(N * in, 0.5f), dW(in * out, 0.25f), db(out, 0.125f);
  auto dx_ref = dx, dW_ref = dW, db_ref = db;
  std::vector<float> dpre(N * out, 0.0f);
  ops.linear_backward(view(x.data(), N, in), view(W.data(), in, out), Activation::gelu_tanh, view(pre.data(), N, out),
                      view(dy.data(), N, out), view(dx.data(), N, in), view(dW.data(), in, out),
                      view(db.data(), 1, out));
  cpu::gelu_tanh_backward(pre_ref.data(), dy.data(), dpre.data(), N * out);
  cpu::linear_backward(x.data(), W.data(), dpre.data(), dx_ref.data(), dW_ref.data(), db_ref.data(), N, in, out);
  BOOST_TEST(bitwise_equal(dx, dx_ref));
  BOOST_TEST(bitwise_equal(dW, dW_ref));
  BOOST_TEST(bitwise_equal(db, db_ref));

  // norm + modulate with scale/shift as chunks 1 and 0 of one [N, 2C] tensor.
  const int C = out, ld = 2 * C;
  const auto mod = random_floats(N * ld, 5);
  std::vector<float> normed(N * C), ym(N * C), mean(N), rstd(N), normed_ref(N * C), ym_ref(N * C), mean_ref(N),
      rstd_ref(N);
  const View modv = view(mod.data(), N, ld);
  ops.norm_modulate_forward(view(y.data(), N, C), modv.cols_range(C, C), modv.cols_range(0, C),
                            view(normed.data(), N, C), view(ym.data(), N, C), view(mean.data(), N, 1),
                            view(rstd.data(), N, 1), 1e-5f);
  cpu::layernorm_forward(y.data(), nullptr, nullptr, normed_ref.data(), mean_ref.data(), rstd_ref.data(), N, C, 1e-5f);
  cpu::modulate_forward(normed_ref.data(), mod.data() + C, mod.data(), ld, ym_ref.data(), N, C);
  BOOST_TEST(bitwise_equal(ym, ym_ref));
  BOOST_TEST(bitwise_equal(normed, normed_ref));
}

BOOST_AUTO_TEST_CASE(cpu_ops_rows_and_flow_loss_match_references) {
  CpuOps ops;
  const int64_t C = 4;
  const auto src = random_floats(5 * C, 11);
  const std::vector<int32_t> from = {4, 0, 4}, to = {1, 1, 3};
  std::vector<float> dst(4 * C, 1.0f);
  ops.add_rows(view(src.data(), 5, C), RowIndex{from.data(), 3}, view(dst.data(), 4, C), RowIndex{to.data(), 3});
  for (int64_t c = 0; c < C; ++c) {
    BOOST_TEST(dst[size_t(1 * C + c)] == (1.0f + src[size_t(4 * C + c)]) + src[size_t(c)]);
    BOOST_TEST(dst[size_t(3 * C + c)] == 1.0f + src[size_t(4 * C + c)]);
    BOOST_TEST(dst[size_t(c)] == 1.0f);
  }

  // mse over pred [3, 2] reading target rows {2, 0, 2} and columns {1, 0} of [3, 3] targets.
  const auto pred = random_floats(3 * 2, 12), plus = random_floats(9, 13), minus = random_floats(9, 14);
  const std::vector<float> mask = {1, 0, 1, 0, 1, 1, 1, 1, 0};
  const std::vector<int32_t> rows = {2, 0, 2}, cols = {1, 0};
  const double den = 3.5, weight = 0.75;
  auto predd = to_double(pred);
  auto loss_of = [&] {
    double s = 0;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 2; ++c) {
        const int e = rows[size_t(r)] * 3 + cols[size_t(c)];
        const double d = predd[size_t(r * 2 + c)] - (double(plus[size_t(e)]) - minus[size_t(e)]);
        s += mask[size_t(e)] * d * d;
      }
    return s;
  };
  std::vector<float> dpred(6);
  double* sum = static_cast<double*>(ops.allocate(sizeof(double)));
  ops.mse_loss(view(pred.data(), 3, 2), view(plus.data(), 3, 3), view(minus.data(), 3, 3), view(mask.data(), 3, 3),
               RowIndex{rows.data(), 3}, RowIndex{cols.data(), 2}, LossConfig{den, weight}, view(dpred.data(), 3, 2),
               sum);
  BOOST_TEST(*sum == loss_of(), boost::test_tools::tolerance(1e-6));
  const auto g = numeric_grad([&] { return weight * loss_of() / den; }, predd);
  check_close(dpred, g, 1e-5, 1e-7, "mse_loss dpred");
  ops.deallocate(sum);

  // flow_interpolate: y[r] = (1 − s)·u + s·w with per-row s and source rows.
  const auto u = random_floats(2 * C, 15), w = random_floats(2 * C, 16);
  const std::vector<float> t = {0.25f, 0.5f, 0.75f};
  const std::vector<int32_t> src_rows = {1, 0}, t_rows = {2, 0};
  std::vector<float> yi(2 * C);
  ops.flow_interpolate(view(u.data(), 2, C), view(w.data(), 2, C), RowIndex{src_rows.data(), 2},
                       view(t.data(), 3, 1), RowIndex{t_rows.data(), 2}, view(yi.data(), 2, C));
  for (int64_t c = 0; c < C; ++c) {
    BOOST_TEST(yi[size_t(c)] == (1.0f - 0.75f) * u[size_t(C + c)] + 0.75f * w[size_t(C + c)]);
    BOOST_TEST(yi[size_t(C + c)] == (1.0f - 0.25f) * u[size_t(c)] + 0.25f * w[size_t(c)]);
  }
}
