#include "model/time_encoder.hpp"

#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/embedding.hpp"
#include "kernels/cpu/linear.hpp"
#include "model/rows.hpp"

namespace emb {
namespace {

constexpr int kTimeFreqs = 256;  // sinus(t, 256) feeds time_enc.fc1

}  // namespace

void TimeEncoder::add_params(ParamRegistry& reg, int D) {
  D_ = D;
  fc1_ = reg.add_linear("time_enc.fc1", kTimeFreqs, D);
  fc2_ = reg.add_linear("time_enc.fc2", D, D);
}

void TimeEncoder::plan(ActivationPlan& plan, int64_t rows) {
  sin_ = plan.floats(rows * kTimeFreqs);
  for (float** p : {&fc1_out_, &fc1_silu_, &temb, &stemb, &dtemb, &dstemb, &dfc1_out_, &dfc1_silu_})
    *p = plan.floats(rows * D_);
}

void TimeEncoder::forward(const ParamAccess& P, const TimeRows& time) {
  const int64_t Tu = int64_t(time.t.size());
  cpu::sinus_embedding(time.t.data(), sin_, Tu, kTimeFreqs);
  cpu::linear_forward(sin_, P.p(fc1_.weight), P.p(fc1_.bias), fc1_out_, Tu, kTimeFreqs, D_);
  cpu::silu_forward(fc1_out_, fc1_silu_, Tu * D_);
  cpu::linear_forward(fc1_silu_, P.p(fc2_.weight), P.p(fc2_.bias), temb, Tu, D_, D_);
  cpu::silu_forward(temb, stemb, Tu * D_);
}

void TimeEncoder::zero_grads(const TimeRows& time) {
  const int64_t Tu = int64_t(time.t.size());
  zero(dtemb, Tu * D_), zero(dstemb, Tu * D_);
}

void TimeEncoder::backward(const ParamAccess& P, const TimeRows& time) {
  const int64_t Tu = int64_t(time.t.size());
  zero(dfc1_silu_, Tu * D_), zero(dfc1_out_, Tu * D_);
  cpu::silu_backward(temb, dstemb, dtemb, Tu * D_);
  cpu::linear_backward(fc1_silu_, P.p(fc2_.weight), dtemb, dfc1_silu_, P.g(fc2_.weight), P.g(fc2_.bias), Tu, D_,
                       D_);
  cpu::silu_backward(fc1_out_, dfc1_silu_, dfc1_out_, Tu * D_);
  cpu::linear_backward(sin_, P.p(fc1_.weight), dfc1_out_, nullptr, P.g(fc1_.weight), P.g(fc1_.bias), Tu, kTimeFreqs,
                       D_);
}

}  // namespace emb
