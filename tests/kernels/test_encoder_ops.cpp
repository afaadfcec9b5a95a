// The frozen encoders' ops on the CPU reference (kernels/ops.hpp, issue 33): encoder attention
// against a double-precision softmax written here (segments of several lengths, grouped-query
// heads, causal and bidirectional, scale, dense and relative-bucket biases, q/k/v as strided
// chunks of one fused QKV output, lse), the rotate-half RoPE against its float32 tables and as
// an adjoint/inverse pair, the gated activations against double references and their backward
// against central differences, the per-head RMSNorm as rmsnorm on a [T·H, hd] view; bad calls
// are one-line errors.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <vector>

#include "error_of.hpp"
#include "kernel_check.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/packed_linear.hpp"
#include "kernels/cpu/packed_tile.hpp"
#include "kernels/cpu/rope_half.hpp"

using namespace emb;
using namespace emb::test;

namespace {

// The encoder attention of kernels/ops.hpp in double, from its definition.
struct AttnCase {
  int Hq, Hkv, hd;
  double scale;
  bool causal;
  std::vector<int64_t> q_off, k_off;
  AttnBiasKind bias = AttnBiasKind::none;
  std::vector<int32_t> buckets = {};
  int rel_zero = 0;
  int64_t n_buckets = 0;
};

void reference_attention(const AttnCase& a, const std::vector<float>& qkv_q, int64_t ldq,
                         const std::vector<float>& qkv_k, int64_t ldk, const std::vector<float>& qkv_v, int64_t ldv,
                         const std::vector<float>& bias, std::vector<double>& out, std::vector<double>& lse) {
  const int64_t Tq = a.q_off.back();
  out.assign(size_t(Tq * a.Hq * a.hd), 0.0);
  lse.assign(size_t(Tq * a.Hq), 0.0);
  const int group = a.Hq / a.Hkv;
  for (size_t s = 0; s + 1 < a.q_off.size(); ++s) {
    const int64_t lq = a.q_off[s + 1] - a.q_off[s], lk = a.k_off[s + 1] - a.k_off[s];
    for (int h = 0; h < a.Hq; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        std::vector<double> score;
        for (int64_t j = 0; j < lk; ++j) {
          if (a.causal && j > i + lk - lq) break;
          double d = 0;
          for (int e = 0; e < a.hd; ++e)
            d += double(qkv_q[size_t((a.q_off[s] + i) * ldq + h * a.hd + e)]) *
                 qkv_k[size_t((a.k_off[s] + j) * ldk + (h / group) * a.hd + e)];
          d *= a.scale;
          if (a.bias == AttnBiasKind::dense) d += bias[size_t((h * lq + i) * lk + j)];
          if (a.bias == AttnBiasKind::relative_buckets) {
            const int64_t r =
                std::min<int64_t>(std::max<int64_t>(j - i + a.rel_zero, 0), int64_t(a.buckets.size()) - 1);
            d += bias[size_t(h * a.n_buckets + a.buckets[size_t(r)])];
          }
          score.push_back(d);
        }
        double m = -INFINITY, sum = 0;
        for (double x : score) m = std::max(m, x);
        for (double& x : score) sum += (x = std::exp(x - m));
        for (size_t j = 0; j < score.size(); ++j)
          for (int e = 0; e < a.hd; ++e)
            out[size_t((a.q_off[s] + i) * a.Hq * a.hd + h * a.hd + e)] +=
                score[j] / sum * qkv_v[size_t((a.k_off[s] + int64_t(j)) * ldv + (h / group) * a.hd + e)];
        lse[size_t((a.q_off[s] + i) * a.Hq + h)] = m + std::log(sum);
      }
  }
}

// Runs `a` through CpuOps with q, k, v as column chunks of one fused [T, (Hq + 2Hkv)·hd] tensor
// (self-attention) or separate tensors (cross, k_off ≠ q_off); compares out and lse.
void check_attention_case(const AttnCase& a, const std::string& what) {
  CpuOps ops;
  const int64_t Tq = a.q_off.back(), Tk = a.k_off.back();
  const bool fused = a.q_off == a.k_off;
  const int64_t wq = a.Hq * a.hd, wk = a.Hkv * a.hd;
  const int64_t ld = fused ? wq + 2 * wk : 0;
  const auto qs = random_floats(size_t(fused ? Tq * ld : Tq * wq), 11, -1.5f, 1.5f);
  const auto ks = fused ? qs : random_floats(size_t(Tk * wk), 12, -1.5f, 1.5f);
  const auto vs = fused ? qs : random_floats(size_t(Tk * wk), 13);
  const int64_t ldq = fused ? ld : wq, ldk = fused ? ld : wk;
  const float* q = qs.data();
  const float* k = fused ? qs.data() + wq : ks.data();
  const float* v = fused ? qs.data() + wq + wk : vs.data();
  std::vector<float> bias;
  View bias_view;
  if (a.bias == AttnBiasKind::dense) {
    const int64_t lq = a.q_off[1], lk = a.k_off[1];
    bias = random_floats(size_t(a.Hq * lq * lk), 14, -2, 2);
    bias_view = view(bias.data(), a.Hq * lq, lk);
  } else if (a.bias == AttnBiasKind::relative_buckets) {
    bias = random_floats(size_t(a.Hq * a.n_buckets), 15, -2, 2);
    bias_view = view(bias.data(), a.Hq, a.n_buckets);
  }
  std::vector<float> out(size_t(Tq * wq)), lse(size_t(Tq * a.Hq));
  const AttnBias kind{a.bias, a.buckets.data(), int(a.buckets.size()), a.rel_zero};
  const EncoderAttnConfig cfg{a.Hq, a.Hkv, a.hd, float(a.scale), a.causal};
  const AttnSegments seg{a.q_off.data(), fused ? nullptr : a.k_off.data(), int(a.q_off.size()) - 1};
  ops.encoder_attention_forward(view(q, Tq, wq, ldq), view(k, Tk, wk, ldk), view(v, Tk, wk, ldk), bias_view, kind,
                                view(out.data(), Tq, wq), view(lse.data(), Tq, a.Hq), cfg, seg);
  // The reference reads k and v as contiguous [Tk, Hkv·hd].
  std::vector<float> k_rows(size_t(Tk * wk)), v_rows(size_t(Tk * wk));
  for (int64_t t = 0; t < Tk; ++t)
    for (int64_t c = 0; c < wk; ++c)
      k_rows[size_t(t * wk + c)] = k[t * ldk + c], v_rows[size_t(t * wk + c)] = v[t * ldk + c];
  std::vector<double> want, want_lse;
  reference_attention(a, qs, ldq, k_rows, wk, v_rows, wk, bias, want, want_lse);
  check_close(out, want, 2e-6, 0.0, what + " out");
  check_close(lse, want_lse, 2e-6, 0.0, what + " lse");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(encoder_ops)

BOOST_AUTO_TEST_CASE(encoder_attention_matches_a_double_softmax) {
  // SigLIP-like: 3 images of 20 tokens (segments longer than the 64-query tile too), bidirectional MHA.
  check_attention_case({2, 2, 72, 1.0 / std::sqrt(72.0), false, {0, 20, 40, 150}, {0, 20, 40, 150}}, "mha hd 72");
  // Qwen3-like: two prompts of 70 and 5 tokens, causal, 4 q heads on 2 kv heads.
  check_attention_case({4, 2, 16, 0.25, true, {0, 70, 75}, {0, 70, 75}}, "causal gqa hd 16");
  // Cross-attention with more keys than queries, causal aligned at the end.
  check_attention_case({2, 1, 16, 0.25, true, {0, 3, 10}, {0, 5, 17}}, "causal cross");
  // umT5-like: unscaled, relative-position buckets (a bucket map shorter than the distances: clamped).
  AttnCase t5{2, 2, 8, 1.0, false, {0, 9, 21}, {0, 9, 21}, AttnBiasKind::relative_buckets};
  t5.buckets = {0, 1, 2, 3, 3, 4, 5, 6, 7, 7, 1};
  t5.rel_zero = 5, t5.n_buckets = 8;
  check_attention_case(t5, "relative buckets");
  // A dense per-segment bias (segments of one size).
  AttnCase dense{2, 2, 8, 0.5, false, {0, 6, 12}, {0, 6, 12}, AttnBiasKind::dense};
  check_attention_case(dense, "dense bias");
}

BOOST_AUTO_TEST_CASE(encoder_attention_bad_calls_are_one_line) {
  CpuOps ops;
  std::vector<float> x(8 * 32), out(8 * 32);
  const View q = view(x.data(), 8, 32), o = view(out.data(), 8, 32);
  const std::vector<int64_t> off = {0, 5, 8}, short_off = {0, 5, 7}, causal_q = {0, 4}, causal_k = {0, 2};
  const EncoderAttnConfig cfg{2, 2, 16, 0.25f, false};
  BOOST_TEST(
      error_of([&] {
        ops.encoder_attention_forward(q, q, q, View{}, AttnBias{}, o, View{}, cfg, {short_off.data(), nullptr, 2});
      }) ==
      "encoder_attention_forward: the segments cover 7 query rows, q has 8; q [8, 32], k [8, 32], "
      "v [8, 32], bias absent, out [8, 32], lse absent");
  BOOST_TEST(error_of([&] {
               ops.encoder_attention_forward(q, q, q, View{}, AttnBias{}, o, View{}, {3, 2, 16, 0.25f, false},
                                             {off.data(), nullptr, 2});
             }).rfind("encoder_attention_forward: q_heads 3 must be a positive multiple of kv_heads 2", 0) == 0);
  const View q4 = view(x.data(), 4, 32), k2 = view(x.data(), 2, 32), o4 = view(out.data(), 4, 32);
  BOOST_TEST(error_of([&] {
               ops.encoder_attention_forward(q4, k2, k2, View{}, AttnBias{}, o4, View{}, {2, 2, 16, 0.25f, true},
                                             {causal_q.data(), causal_k.data(), 1});
             }).rfind("encoder_attention_forward: causal segment 0 has 4 queries but 2 keys", 0) == 0);
  std::vector<float> table(2 * 4);
  const std::vector<int32_t> buckets = {0, 9};
  BOOST_TEST(error_of([&] {
               ops.encoder_attention_forward(q, q, q, view(table.data(), 2, 4),
                                             {AttnBiasKind::relative_buckets, buckets.data(), 2, 0}, o, View{}, cfg,
                                             {off.data(), nullptr, 2});
             }) == "encoder_attention_forward: bucket 9 of relative position 1 is outside the table's 4 buckets");
}

BOOST_AUTO_TEST_CASE(rope_half_rotates_pairs_i_and_i_plus_half_by_float32_angles) {
  const int H = 2, hd = 16;
  const float theta = 1e6f;
  const std::vector<int32_t> pos = {0, 1, 517, 40000};
  const int64_t T = int64_t(pos.size());
  const auto x = random_floats(size_t(T * H * hd), 31);
  auto y = x;
  cpu::rope_half_forward(y.data(), pos.data(), T, H, hd, theta);
  std::vector<double> want(x.size());
  for (int64_t t = 0; t < T; ++t)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < hd / 2; ++i) {
        // transformers' float32 table: inv = 1 / θ^(2i/hd), angle = float32(pos · inv).
        const float inv = 1.0f / float(std::pow(double(theta), double(float(2 * i) / float(hd))));
        const double angle = double(float(pos[size_t(t)]) * inv);
        const size_t a = size_t((t * H + h) * hd + i), b = a + hd / 2;
        want[a] = x[a] * std::cos(angle) - x[b] * std::sin(angle);
        want[b] = x[b] * std::cos(angle) + x[a] * std::sin(angle);
      }
  check_close(y, want, 1e-6, 0.0, "rope_half");
  // Adjoint and inverse.
  const auto g = random_floats(x.size(), 32);
  auto rg = g;
  cpu::rope_half_backward(rg.data(), pos.data(), T, H, hd, theta);
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < x.size(); ++i) lhs += double(y[i]) * g[i], rhs += double(x[i]) * rg[i];
  BOOST_TEST(std::fabs(lhs - rhs) <= 1e-5 * std::fabs(lhs) + 1e-5, "<Rx, g> = " << lhs << ", <x, Rᵀg> = " << rhs);
  cpu::rope_half_backward(y.data(), pos.data(), T, H, hd, theta);
  check_close(y, x, 0.0, 1e-6, "backward(forward(x)) = x");
}

BOOST_AUTO_TEST_CASE(gated_activations_forward_and_gradient) {
  CpuOps ops;
  const int64_t N = 7, C = 13, ld = 2 * C + 3;  // gate | up chunks of one [N, 2C] tensor (+ padding)
  for (Activation act : {Activation::silu, Activation::gelu_tanh}) {
    const auto gu = random_floats(size_t(N * ld), 41, -4, 4);
    std::vector<float> y(size_t(N * C));
    const View gate = view(gu.data(), N, C, ld), up = view(gu.data() + C, N, C, ld);
    ops.gated_activation_forward(act, gate, up, view(y.data(), N, C));
    auto act_d = [act](double g) {
      return act == Activation::silu ? g / (1 + std::exp(-g))
                                     : 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g)));
    };
    std::vector<double> want(y.size());
    for (int64_t r = 0; r < N; ++r)
      for (int64_t c = 0; c < C; ++c)
        want[size_t(r * C + c)] = act_d(gu[size_t(r * ld + c)]) * gu[size_t(r * ld + C + c)];
    check_close(y, want, 1e-6, 0.0, "gated forward");
    // Backward of L = Σ w·y by central differences in double.
    const auto w = random_floats(size_t(N * C), 42);
    std::vector<float> dgu(size_t(N * ld), 0.25f);
    const auto before = dgu;
    ops.gated_activation_backward(act, gate, up, view(w.data(), N, C), view(dgu.data(), N, C, ld),
                                  view(dgu.data() + C, N, C, ld));
    std::vector<double> xd = to_double(gu);
    auto loss = [&] {
      double s = 0;
      for (int64_t r = 0; r < N; ++r)
        for (int64_t c = 0; c < C; ++c)
          s += w[size_t(r * C + c)] * act_d(xd[size_t(r * ld + c)]) * xd[size_t(r * ld + C + c)];
      return s;
    };
    std::vector<double> numeric = numeric_grad(loss, xd);
    for (int64_t r = 0; r < N; ++r)
      for (int64_t c = 2 * C; c < ld; ++c) numeric[size_t(r * ld + c)] = 0;  // the padding columns
    check_close(added(dgu, before), numeric, 1e-5, 1e-7, "gated backward");
  }
  std::vector<float> a(6), b(4);
  BOOST_TEST(error_of([&] {
               ops.gated_activation_forward(Activation::silu, view(a.data(), 2, 3), view(b.data(), 2, 2),
                                            view(a.data(), 2, 3));
             }) ==
             "gated_activation_forward: gate and up differ in shape; gate [2, 3], up [2, 2], y [2, 3], dgate "
             "absent, dup absent");
}

// The frozen linears: packed once (AVX-512 panels where the CPU has them), then multiplied; equal
// to linear_forward to fp32 summation order, at shapes with partial row tiles, partial column
// panels and several K blocks, with bias and activation epilogues.
BOOST_AUTO_TEST_CASE(packed_linear_equals_linear) {
  CpuOps ops;
  BOOST_TEST_MESSAGE("packed layout: " << (cpu::packed::avx512() ? "AVX-512 panels" : "W as given"));
  struct Shape {
    int64_t M, K, N;
    Activation act;
    bool bias;
  };
  for (const Shape& s : {Shape{37, 500, 70, Activation::gelu_tanh, true}, Shape{1, 33, 5, Activation::none, false},
                         Shape{300, 64, 32, Activation::silu, true}, Shape{13, 800, 96, Activation::none, true}}) {
    const auto x = random_floats(size_t(s.M * s.K), 61), W = random_floats(size_t(s.K * s.N), 62, -0.2f, 0.2f);
    const auto b = random_floats(size_t(s.N), 63);
    std::vector<float> packed(size_t(ops.packed_linear_elements(s.K, s.N)));
    ops.pack_linear(view(W.data(), s.K, s.N), view(packed.data(), 1, int64_t(packed.size())));
    std::vector<float> y(size_t(s.M * s.N)), pre(y.size()), want(y.size()), want_pre(y.size());
    const bool act = s.act != Activation::none;
    const View bias = s.bias ? view(b.data(), 1, s.N) : View{};
    ops.packed_linear_forward(view(x.data(), s.M, s.K), view(packed.data(), 1, int64_t(packed.size())), bias, s.act,
                              act ? view(pre.data(), s.M, s.N) : View{}, view(y.data(), s.M, s.N));
    ops.linear_forward(view(x.data(), s.M, s.K), view(W.data(), s.K, s.N), bias, s.act,
                       act ? view(want_pre.data(), s.M, s.N) : View{}, view(want.data(), s.M, s.N));
    check_close(y, want, 1e-6, 0.0, str("packed linear ", s.M, "x", s.K, "x", s.N));
    if (act) check_close(pre, want_pre, 1e-6, 0.0, "pre");
  }
  std::vector<float> x(4 * 8), y(4 * 3), small(5);
  BOOST_TEST(error_of([&] {
               ops.packed_linear_forward(view(x.data(), 4, 8), view(small.data(), 1, 5), View{}, Activation::none,
                                         View{}, view(y.data(), 4, 3));
             }).rfind("packed_linear_forward: packed must be the packed form of a W [8, 3]", 0) == 0);
}

// Qwen3's q_norm/k_norm: RMSNorm over each head's hd values, as rmsnorm_forward on [T·H, hd].
BOOST_AUTO_TEST_CASE(per_head_rmsnorm_is_rmsnorm_on_a_head_view) {
  CpuOps ops;
  const int64_t T = 5, H = 3, hd = 8;
  const auto x = random_floats(size_t(T * H * hd), 51, -3, 3), w = random_floats(size_t(hd), 52);
  std::vector<float> y(x.size()), rstd(size_t(T * H));
  ops.rmsnorm_forward(view(x.data(), T * H, hd), view(w.data(), 1, hd), view(y.data(), T * H, hd),
                      view(rstd.data(), T * H, 1));
  std::vector<double> want(x.size());
  for (int64_t r = 0; r < T * H; ++r) {
    double ss = 0;
    for (int64_t d = 0; d < hd; ++d) ss += double(x[size_t(r * hd + d)]) * x[size_t(r * hd + d)];
    const double inv = 1 / std::sqrt(ss / hd + 1e-6);
    for (int64_t d = 0; d < hd; ++d) want[size_t(r * hd + d)] = x[size_t(r * hd + d)] * inv * w[size_t(d)];
  }
  check_close(y, want, 1e-6, 0.0, "per-head rmsnorm");
}

BOOST_AUTO_TEST_SUITE_END()
