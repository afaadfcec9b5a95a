#include "model/time_encoder.hpp"

namespace emb {
namespace {

constexpr int kTimeFreqs = 256;  // sinus(t, 256) feeds time_enc.fc1

}  // namespace

void TimeEncoder::add_params(ParamRegistry& reg, int D, const SinusConfig& sinusoid) {
  D_ = D;
  sinusoid_ = sinusoid;
  fc1_ = reg.add_linear("time_enc.fc1", kTimeFreqs, D);
  fc2_ = reg.add_linear("time_enc.fc2", D, D);
}

void TimeEncoder::plan(ActivationPlan& plan, int64_t rows) {
  sin_ = plan.floats(rows * kTimeFreqs);
  for (float** p : {&fc1_out_, &fc1_silu_, &temb, &stemb, &dtemb, &dstemb, &dfc1_silu_})
    *p = plan.floats(rows * D_);
}

void TimeEncoder::forward(Ops& ops, const ParamAccess& P, const View& t) {
  const int64_t Tu = t.rows;
  ops.sinus_embedding(t, view(sin_, Tu, kTimeFreqs), sinusoid_);
  ops.linear_forward(view(sin_, Tu, kTimeFreqs), P.pv(fc1_.weight), P.pv(fc1_.bias), Activation::silu,
                     view(fc1_out_, Tu, D_), view(fc1_silu_, Tu, D_));
  ops.linear_forward(view(fc1_silu_, Tu, D_), P.pv(fc2_.weight), P.pv(fc2_.bias), Activation::silu,
                     view(temb, Tu, D_), view(stemb, Tu, D_));
}

void TimeEncoder::zero_grads(Ops& ops, int64_t Tu) {
  ops.zero(view(dtemb, Tu, D_)), ops.zero(view(dstemb, Tu, D_));
}

// dstemb reaches temb through silu; dtemb already holds what reached temb directly.
void TimeEncoder::backward(Ops& ops, const ParamAccess& P, int64_t Tu) {
  ops.activation_backward(Activation::silu, view(temb, Tu, D_), view(dstemb, Tu, D_), view(dtemb, Tu, D_));
  ops.zero(view(dfc1_silu_, Tu, D_));
  ops.linear_backward(view(fc1_silu_, Tu, D_), P.pv(fc2_.weight), Activation::none, View{}, view(dtemb, Tu, D_),
                      view(dfc1_silu_, Tu, D_), P.gv(fc2_.weight), P.gv(fc2_.bias));
  ops.linear_backward(view(sin_, Tu, kTimeFreqs), P.pv(fc1_.weight), Activation::silu, view(fc1_out_, Tu, D_),
                      view(dfc1_silu_, Tu, D_), View{}, P.gv(fc1_.weight), P.gv(fc1_.bias));
}

}  // namespace emb
