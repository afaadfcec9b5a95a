#include "model/unit_hooks.hpp"

#include <utility>

#include "core/error.hpp"

namespace emb {

ParamAccess::ParamAccess(const ParamRegistry& reg, const float* params, float* grads, UnitHooks* hooks,
                         std::vector<DType> unit_dtypes, std::vector<bool> frozen, GraphSegments* segments)
    : reg_(reg), params_(params), grads_(grads), hooks_(hooks), unit_dtypes_(std::move(unit_dtypes)),
      frozen_(std::move(frozen)), segments_(segments),
      unit_params_(size_t(reg.n_units()), nullptr), unit_grads_(size_t(reg.n_units()), nullptr) {
  EMB_ASSERT(unit_dtypes_.size() == size_t(reg.n_units()));
  EMB_ASSERT(frozen_.empty() || frozen_.size() == size_t(reg.size()));
  if (!hooks_)
    for (DType t : unit_dtypes_)
      EMB_CHECK(t == DType::f32, "model: bf16 parameters come from the trainer's unit hooks; the flat parameter "
                                 "buffer is fp32 (set model.precision = fp32 to call the model directly)");
}

template <class Hook>
void ParamAccess::call_hooks(Hook&& hook) {
  if (segments_)
    segments_->outside(hook);
  else
    hook();
}

void ParamAccess::enter_forward(int u) {
  if (!hooks_) {
    unit_params_[size_t(u)] = params_ + reg_.unit(u).offset;
    return;
  }
  call_hooks([&] { unit_params_[size_t(u)] = hooks_->unit_params(u, false, unit_dtypes_[size_t(u)]); });
}

void ParamAccess::enter_backward(int u) {
  if (!hooks_) {
    unit_params_[size_t(u)] = params_ + reg_.unit(u).offset;
    unit_grads_[size_t(u)] = grads_ ? grads_ + reg_.unit(u).offset : nullptr;
    return;
  }
  call_hooks([&] {
    unit_params_[size_t(u)] = hooks_->unit_params(u, true, unit_dtypes_[size_t(u)]);
    unit_grads_[size_t(u)] = hooks_->unit_grads(u);
  });
}

void ParamAccess::leave_backward(int u) {
  if (hooks_) call_hooks([&] { hooks_->unit_grads_ready(u); });
}

float* ParamAccess::g(int tensor) const {
  if (!frozen_.empty() && frozen_[size_t(tensor)]) return nullptr;
  const ParamInfo& info = reg_[tensor];
  float* base = unit_grads_[size_t(info.unit)];
  return base ? base + (info.offset - reg_.unit(info.unit).offset) : nullptr;
}

namespace {

// The tensor as [all dims but the last, last dim] at p, in dtype.
View tensor_view(const ParamInfo& info, const void* p, DType dtype) {
  if (!p) return View{};
  const int64_t cols = info.shape.empty() ? 1 : info.shape.back();
  return View{const_cast<void*>(p), dtype, cols ? info.numel / cols : 0, cols, cols};
}

}  // namespace

View ParamAccess::pv(int tensor) const {
  if (tensor < 0) return View{};
  const ParamInfo& info = reg_[tensor];
  const DType dtype = unit_dtypes_[size_t(info.unit)];
  const char* base = static_cast<const char*>(unit_params_[size_t(info.unit)]);
  EMB_ASSERT(base != nullptr);
  return tensor_view(info, base + (info.offset - reg_.unit(info.unit).offset) * int64_t(dtype_size(dtype)), dtype);
}
View ParamAccess::gv(int tensor) const {
  return tensor < 0 ? View{} : tensor_view(reg_[tensor], g(tensor), DType::f32);
}

}  // namespace emb
