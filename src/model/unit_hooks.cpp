#include "model/unit_hooks.hpp"

#include "core/error.hpp"

namespace emb {

ParamAccess::ParamAccess(const ParamRegistry& reg, const float* params, float* grads, UnitHooks* hooks)
    : reg_(reg), params_(params), grads_(grads), hooks_(hooks),
      unit_params_(size_t(reg.n_units()), nullptr), unit_grads_(size_t(reg.n_units()), nullptr) {}

void ParamAccess::enter_forward(int u) {
  unit_params_[size_t(u)] = hooks_ ? hooks_->unit_params(u, false) : params_ + reg_.unit(u).offset;
}

void ParamAccess::enter_backward(int u) {
  if (hooks_) {
    unit_params_[size_t(u)] = hooks_->unit_params(u, true);
    unit_grads_[size_t(u)] = hooks_->unit_grads(u);
  } else {
    unit_params_[size_t(u)] = params_ + reg_.unit(u).offset;
    unit_grads_[size_t(u)] = grads_ ? grads_ + reg_.unit(u).offset : nullptr;
  }
}

void ParamAccess::leave_backward(int u) {
  if (hooks_) hooks_->unit_grads_ready(u);
}

const float* ParamAccess::p(int tensor) const {
  const ParamInfo& info = reg_[tensor];
  const float* base = unit_params_[size_t(info.unit)];
  EMB_ASSERT(base != nullptr);
  return base + (info.offset - reg_.unit(info.unit).offset);
}

float* ParamAccess::g(int tensor) const {
  const ParamInfo& info = reg_[tensor];
  float* base = unit_grads_[size_t(info.unit)];
  return base ? base + (info.offset - reg_.unit(info.unit).offset) : nullptr;
}

namespace {

View tensor_view(const ParamInfo& info, const float* p) {
  if (!p) return View{};
  const int64_t cols = info.shape.empty() ? 1 : info.shape.back();
  return view(p, cols ? info.numel / cols : 0, cols);
}

}  // namespace

View ParamAccess::pv(int tensor) const { return tensor < 0 ? View{} : tensor_view(reg_[tensor], p(tensor)); }
View ParamAccess::gv(int tensor) const { return tensor < 0 ? View{} : tensor_view(reg_[tensor], g(tensor)); }

}  // namespace emb
