#include "model/action_encoder.hpp"

namespace emb {
namespace {

constexpr SinusConfig kActionSinusoid{false, 0};  // [sin, cos] over k/(D/2)

void linear_forward(Ops& ops, const ParamAccess& P, const LinearRef& l, const EmbRows& emb, const View& x,
                    Activation act, const View& pre, const View& y) {
  if (l.n_emb > 0)
    ops.linear_emb_forward(x, P.pv(l.weight), P.pv(l.bias), emb, act, pre, y);
  else
    ops.linear_forward(x, P.pv(l.weight), P.pv(l.bias), act, pre, y);
}

void linear_backward(Ops& ops, const ParamAccess& P, const LinearRef& l, const EmbRows& emb, const View& x,
                     Activation act, const View& pre, const View& dy, const View& dx) {
  if (l.n_emb > 0)
    ops.linear_emb_backward(x, P.pv(l.weight), emb, act, pre, dy, dx, P.gv(l.weight), P.gv(l.bias));
  else
    ops.linear_backward(x, P.pv(l.weight), act, pre, dy, dx, P.gv(l.weight), P.gv(l.bias));
}

}  // namespace

void ActionEncoder::add_params(ParamRegistry& reg, int n_emb, int A, int D) {
  D_ = D;
  auto add = [&](const char* name, int in, int out) {
    return n_emb > 0 ? reg.add_linear_emb(name, n_emb, in, out) : reg.add_linear(name, in, out);
  };
  fc1_ = add("action_enc.fc1", A, D);
  fc2_ = add("action_enc.fc2", 2 * D, D);
  fc3_ = add("action_enc.fc3", D, D);
}

void ActionEncoder::plan(ActivationPlan& plan, int64_t rows) {
  for (float** p : {&sin_, &fc1_out_, &fc2_out_, &fc2_silu_, &out, &dout, &dfc2_silu_, &dfc1_out_})
    *p = plan.floats(rows * D_);
  for (float** p : {&cat_, &dcat_}) *p = plan.floats(rows * 2 * D_);
}

void ActionEncoder::forward(Ops& ops, const ParamAccess& P, const View& a_t, const View& t, const EmbRows& emb) {
  const int64_t Ta = a_t.rows, D = D_;
  const View cat = view(cat_, Ta, 2 * D);
  linear_forward(ops, P, fc1_, emb, a_t, Activation::none, View{}, view(fc1_out_, Ta, D));
  ops.sinus_embedding(t, view(sin_, Ta, D), kActionSinusoid);
  ops.copy(view(fc1_out_, Ta, D), cat.cols_range(0, D));
  ops.copy(view(sin_, Ta, D), cat.cols_range(D, D));
  linear_forward(ops, P, fc2_, emb, cat, Activation::silu, view(fc2_out_, Ta, D), view(fc2_silu_, Ta, D));
  linear_forward(ops, P, fc3_, emb, view(fc2_silu_, Ta, D), Activation::none, View{}, view(out, Ta, D));
}

// The sinusoid takes no gradient: only fc1's half of dcat goes on.
void ActionEncoder::backward(Ops& ops, const ParamAccess& P, const View& a_t, const EmbRows& emb) {
  const int64_t Ta = a_t.rows, D = D_;
  const View dfc2_silu = view(dfc2_silu_, Ta, D), dcat = view(dcat_, Ta, 2 * D);
  ops.zero(dfc2_silu), ops.zero(dcat);
  linear_backward(ops, P, fc3_, emb, view(fc2_silu_, Ta, D), Activation::none, View{}, view(dout, Ta, D), dfc2_silu);
  linear_backward(ops, P, fc2_, emb, view(cat_, Ta, 2 * D), Activation::silu, view(fc2_out_, Ta, D), dfc2_silu, dcat);
  ops.copy(dcat.cols_range(0, D), view(dfc1_out_, Ta, D));
  linear_backward(ops, P, fc1_, emb, a_t, Activation::none, View{}, view(dfc1_out_, Ta, D), View{});
}

}  // namespace emb
