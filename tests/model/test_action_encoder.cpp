// The action encoder (model/action_encoder.hpp) on the CPU backend against a float64
// re-implementation of upstream's MultiEmbodimentActionEncoder (Isaac-GR00T action_encoder.py,
// used by DreamZero's CausalWanModel with one embodiment slot; tests/upstream/
// dreamzero_reference.py computes the same inside its loss): out = W3(silu(W2([W1(a_t),
// [sin(t·f), cos(t·f)]]))), f_k = 10⁴^(−k/(D/2)), per token its embodiment's slot. The
// output and every parameter gradient (for a random upstream gradient dout) within 1e-5.
#define BOOST_TEST_MODULE model_action_encoder
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "core/arena.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "model/action_encoder.hpp"

using namespace emb;

namespace {

using Matrix = std::vector<double>;  // row-major

struct Slot {
  Matrix W1, b1, W2, b2, W3, b3;  // [A, D], [D], [2D, D], [D], [D, D], [D]
};

// y[n, out] = x[n, in]·W[in, out] + b
Matrix affine(const Matrix& x, const Matrix& W, const Matrix& b, int64_t n, int in, int out) {
  Matrix y(size_t(n * out));
  for (int64_t r = 0; r < n; ++r)
    for (int o = 0; o < out; ++o) {
      double s = b[size_t(o)];
      for (int i = 0; i < in; ++i) s += x[size_t(r * in + i)] * W[size_t(i * out + o)];
      y[size_t(r * out + o)] = s;
    }
  return y;
}

// dW += xᵀ·dy, db += Σ dy, and dx = dy·Wᵀ.
Matrix affine_backward(const Matrix& x, const Matrix& W, const Matrix& dy, int64_t n, int in, int out, Matrix& dW,
                       Matrix& db) {
  Matrix dx(size_t(n * in), 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int o = 0; o < out; ++o) {
      const double g = dy[size_t(r * out + o)];
      db[size_t(o)] += g;
      for (int i = 0; i < in; ++i) {
        dW[size_t(i * out + o)] += x[size_t(r * in + i)] * g;
        dx[size_t(r * in + i)] += W[size_t(i * out + o)] * g;
      }
    }
  return dx;
}

struct Reference {
  Matrix out;
  std::vector<Slot> grads;
};

// One token at a time through its slot, in double.
Reference upstream(const std::vector<Slot>& slots, const Matrix& a_t, const std::vector<double>& t,
                   const std::vector<int>& slot_of, const Matrix& dout, int A, int D) {
  Reference ref;
  ref.out.resize(size_t(t.size() * D));
  for (const Slot& s : slots)
    ref.grads.push_back(Slot{Matrix(s.W1.size()), Matrix(D), Matrix(s.W2.size()), Matrix(D), Matrix(s.W3.size()),
                             Matrix(D)});
  for (size_t r = 0; r < t.size(); ++r) {
    const Slot& s = slots[size_t(slot_of[r])];
    Slot& g = ref.grads[size_t(slot_of[r])];
    const Matrix x(a_t.begin() + long(r * A), a_t.begin() + long((r + 1) * A));
    Matrix cat = affine(x, s.W1, s.b1, 1, A, D);
    for (int k = 0; k < D / 2; ++k) cat.push_back(std::sin(t[r] * std::pow(1e4, -double(k) / (D / 2))));
    for (int k = 0; k < D / 2; ++k) cat.push_back(std::cos(t[r] * std::pow(1e4, -double(k) / (D / 2))));
    const Matrix pre = affine(cat, s.W2, s.b2, 1, 2 * D, D);
    Matrix act(static_cast<size_t>(D)), dact_dpre(static_cast<size_t>(D));
    for (int i = 0; i < D; ++i) {
      const double sig = 1.0 / (1.0 + std::exp(-pre[size_t(i)]));
      act[size_t(i)] = pre[size_t(i)] * sig;
      dact_dpre[size_t(i)] = sig * (1.0 + pre[size_t(i)] * (1.0 - sig));
    }
    const Matrix y = affine(act, s.W3, s.b3, 1, D, D);
    std::copy(y.begin(), y.end(), ref.out.begin() + long(r * D));
    const Matrix dy(dout.begin() + long(r * D), dout.begin() + long((r + 1) * D));
    Matrix dpre = affine_backward(act, s.W3, dy, 1, D, D, g.W3, g.b3);
    for (int i = 0; i < D; ++i) dpre[size_t(i)] *= dact_dpre[size_t(i)];
    const Matrix dcat = affine_backward(cat, s.W2, dpre, 1, 2 * D, D, g.W2, g.b2);
    affine_backward(x, s.W1, Matrix(dcat.begin(), dcat.begin() + D), 1, A, D, g.W1, g.b1);
  }
  return ref;
}

double max_relative_error(const float* got, const Matrix& want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(double(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return err / std::max(scale, 1e-30);
}

// n_emb 0: wan (plain linears, one slot); n_emb > 0: gr00t's per-embodiment slots.
void check_encoder(int n_emb, const std::vector<double>& t) {
  const int A = 5, D = 16, slots = std::max(n_emb, 1);
  const int64_t Ta = int64_t(t.size());
  std::mt19937 rng(7 + n_emb);
  std::normal_distribution<double> normal(0.0, 0.5);
  ParamRegistry reg;
  reg.begin_unit("encoders");
  ActionEncoder enc;
  enc.add_params(reg, n_emb, A, D);
  std::vector<float> params(size_t(reg.total())), grads(size_t(reg.total()), 0.0f);
  for (float& p : params) p = float(normal(rng));
  // The registry's tensors in order: fc1 W, b; fc2 W, b; fc3 W, b, each slot after slot.
  std::vector<Slot> ref_slots(static_cast<size_t>(slots));
  const int64_t sizes[6] = {A * D, D, 2 * D * D, D, D * D, D};
  int64_t at = 0;
  for (int tensor = 0; tensor < 6; ++tensor)
    for (int s = 0; s < slots; ++s, at += sizes[tensor]) {
      Slot& slot = ref_slots[size_t(s)];
      Matrix* m[6] = {&slot.W1, &slot.b1, &slot.W2, &slot.b2, &slot.W3, &slot.b3};
      m[tensor]->assign(params.begin() + at, params.begin() + at + sizes[tensor]);
    }
  BOOST_REQUIRE(at == reg.total());

  std::vector<float> a_t(size_t(Ta * A)), dout(size_t(Ta * D)), t_f(t.begin(), t.end());
  for (float& v : a_t) v = float(normal(rng));
  for (float& v : dout) v = float(normal(rng));
  std::vector<int32_t> slot_of(static_cast<size_t>(Ta));
  for (int64_t r = 0; r < Ta; ++r) slot_of[size_t(r)] = int32_t(r % slots);

  CpuOps ops;
  Arena arena(1 << 20);
  ActivationPlan plan(&arena);
  enc.plan(plan, Ta);
  ParamAccess P(reg, params.data(), grads.data(), nullptr, {DType::f32}, {});
  P.enter_backward(0);
  const EmbRows emb = n_emb > 0 ? EmbRows{slot_of.data(), Ta, n_emb} : EmbRows{};
  const View a_view = view(a_t.data(), Ta, A);
  enc.forward(ops, P, a_view, view(t_f.data(), Ta, 1), emb);
  std::copy(dout.begin(), dout.end(), enc.dout);
  enc.backward(ops, P, a_view, emb);

  const Reference ref = upstream(ref_slots, Matrix(a_t.begin(), a_t.end()), std::vector<double>(t_f.begin(), t_f.end()),
                                 std::vector<int>(slot_of.begin(), slot_of.end()), Matrix(dout.begin(), dout.end()), A,
                                 D);
  BOOST_TEST(max_relative_error(enc.out, ref.out) < 1e-5);
  at = 0;
  for (int tensor = 0; tensor < 6; ++tensor)
    for (int s = 0; s < slots; ++s, at += sizes[tensor]) {
      const Slot& g = ref.grads[size_t(s)];
      const Matrix* m[6] = {&g.W1, &g.b1, &g.W2, &g.b2, &g.W3, &g.b3};
      BOOST_TEST(max_relative_error(grads.data() + at, *m[tensor]) < 1e-5, "tensor " << tensor << " slot " << s);
    }
}

}  // namespace

// wan: t = 1000·σ of the shift-5 table at ids 0, 1, 500 and 999 (σ = 5s/(1 + 4s), s = 1 − id/1000).
BOOST_AUTO_TEST_CASE(one_slot_equals_upstream) {
  std::vector<double> t;
  for (int id : {0, 1, 500, 999, 1, 500}) {
    const double s = 1.0 - id / 1000.0;
    t.push_back(float(1000.0 * 5 * s / (1 + 4 * s)));
  }
  check_encoder(0, t);
}

// gr00t: the bucket trunc(1000τ), tokens of two embodiments.
BOOST_AUTO_TEST_CASE(embodiment_slots_equal_upstream) { check_encoder(2, {0, 999, 250, 250, 731, 12, 4}); }
