#include "plan/elementwise_work.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <string_view>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/op_types.hpp"
#include "model/model.hpp"
#include "model/unit_hooks.hpp"
#include "train/op_profile.hpp"

namespace emb {

ElementwisePass ElementwisePass::combined(const ElementwisePass& a, double f, const ElementwisePass& b) {
  ElementwisePass p{a.bytes + f * b.bytes, a.calls + f * b.calls, a.op_calls + f * b.op_calls,
                    a.gemm_row_flops + f * b.gemm_row_flops, a.arithmetic};
  for (const auto& [op, work] : b.arithmetic) {
    ArithmeticWork& sum = p.arithmetic[op];
    sum.elements += f * work.elements, sum.rows += f * work.rows, sum.bytes += f * work.bytes;
  }
  return p;
}

namespace {

bool arithmetic(std::string_view op) {
  return std::find(std::begin(kArithmeticElementwiseOps), std::end(kArithmeticElementwiseOps), op) !=
         std::end(kArithmeticElementwiseOps);
}

// A recorder that runs nothing: backend memory handed out as addresses that are never
// dereferenced (allocate counts up from a page that is never mapped), downloads read as zeros.
// The model's host code runs as in a step; no op's result is read by it except through download
// (the loss sums), as on a GPU.
class DryOps final : public ElementwiseRecorder {
 public:
  DryOps(Ops& reference, bool mixed_storage) : ElementwiseRecorder(reference, false), mixed_storage_(mixed_storage) {}

  void* allocate(size_t bytes) override {
    const uintptr_t at = next_;
    next_ += (bytes + 255) / 256 * 256 + 256;
    return reinterpret_cast<void*>(at);
  }
  void deallocate(void*) override {}
  void upload(void*, const void*, size_t) override {}
  void download(void* dst, const void*, size_t bytes) override { std::memset(dst, 0, bytes); }
  std::unique_ptr<InputSlots> make_input_slots() override { return std::make_unique<OpsInputSlots>(*this); }
  void synchronize() override {}
  bool host_memory() const override { return false; }
  bool mixed_storage() const override { return mixed_storage_; }
  size_t device_peak_bytes() const override { return 0; }
  void check_deferred_errors() override {}
  DeviceClock* device_clock() override { return nullptr; }

 private:
  bool mixed_storage_;
  uintptr_t next_ = uintptr_t(1) << 44;
};

// Each unit's parameters and gradients at addresses nothing reads; the first unit asked for its
// backward starts the backward pass, as the trainer's timers do (DataParallel::check_order).
class DryHooks final : public UnitHooks {
 public:
  DryHooks(const ParamRegistry& reg, DryOps& ops) : reg_(reg), ops_(ops) {}
  const void* unit_params(int u, bool backward, DType) override {
    ops_.backward = ops_.backward || backward;
    return reinterpret_cast<const void*>(kParams + uintptr_t(reg_.unit(u).offset) * sizeof(float));
  }
  float* unit_grads(int u) override {
    return reinterpret_cast<float*>(kGrads + uintptr_t(reg_.unit(u).offset) * sizeof(float));
  }
  void unit_grads_ready(int) override {}

 private:
  static constexpr uintptr_t kParams = uintptr_t(1) << 42, kGrads = uintptr_t(1) << 43;
  const ParamRegistry& reg_;
  DryOps& ops_;
};

}  // namespace

void ElementwiseRecorder::rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) {
  add_elements("rope_forward", x);
  ObservedOps::rope_forward(x, pos, cfg);
}

void ElementwiseRecorder::rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) {
  add_elements("rope_backward", dx);
  ObservedOps::rope_backward(dx, pos, cfg);
}

void ElementwiseRecorder::sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) {
  add_elements("sinus_embedding", out);
  ObservedOps::sinus_embedding(t, out, cfg);
}

void ElementwiseRecorder::layernorm_forward(const View& x, const View& weight, const View& bias, const View& y,
                                            const View& mean, const View& rstd, float eps) {
  add_elements("layernorm_forward", x);
  ObservedOps::layernorm_forward(x, weight, bias, y, mean, rstd, eps);
}

void ElementwiseRecorder::layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd,
                                             const View& dy, const View& dx, const View& dweight, const View& dbias) {
  add_elements("layernorm_backward", x);
  ObservedOps::layernorm_backward(x, weight, mean, rstd, dy, dx, dweight, dbias);
}

void ElementwiseRecorder::rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) {
  add_elements("rmsnorm_forward", x);
  ObservedOps::rmsnorm_forward(x, weight, y, rstd);
}

void ElementwiseRecorder::rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy,
                                           const View& dx, const View& dweight) {
  add_elements("rmsnorm_backward", x);
  ObservedOps::rmsnorm_backward(x, weight, rstd, dy, dx, dweight);
}

void ElementwiseRecorder::norm_modulate_forward(const View& x, const View& scale, const View& shift,
                                                const View& normed, const View& y, const View& mean,
                                                const View& rstd, float eps) {
  add_elements("norm_modulate_forward", x);
  ObservedOps::norm_modulate_forward(x, scale, shift, normed, y, mean, rstd, eps);
}

void ElementwiseRecorder::norm_modulate_backward(const View& x, const View& normed, const View& scale,
                                                 const View& mean, const View& rstd, const View& dy, const View& dx,
                                                 const View& dscale, const View& dshift) {
  add_elements("norm_modulate_backward", x);
  ObservedOps::norm_modulate_backward(x, normed, scale, mean, rstd, dy, dx, dscale, dshift);
}

void ElementwiseRecorder::residual_norm_modulate_forward(const View& x, const View& gate, const View& r,
                                                         const View& x_in, const View& scale, const View& shift,
                                                         const View& normed, const View& y, const View& mean,
                                                         const View& rstd, float eps) {
  add_elements("residual_norm_modulate_forward", x);
  ObservedOps::residual_norm_modulate_forward(x, gate, r, x_in, scale, shift, normed, y, mean, rstd, eps);
}

void ElementwiseRecorder::linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                                         const View& y) {
  add_forward_gemm(x, y);
  ObservedOps::linear_forward(x, W, b, act, pre, y);
}

void ElementwiseRecorder::linear_backward(const View& x, const View& W, Activation act, const View& pre,
                                          const View& dy, const View& dx, const View& dW, const View& db) {
  add_backward_gemms(x, dy, dx, dW);
  ObservedOps::linear_backward(x, W, act, pre, dy, dx, dW, db);
}

void ElementwiseRecorder::packed_linear_forward(const View& x, const View& packed, const View& b, Activation act,
                                                const View& pre, const View& y) {
  add_forward_gemm(x, y);
  ObservedOps::packed_linear_forward(x, packed, b, act, pre, y);
}

void ElementwiseRecorder::fp8_linear_forward(const View& x, const View& W, const View& b, Activation act,
                                             const View& pre, const View& y) {
  add_forward_gemm(x, y);
  ObservedOps::fp8_linear_forward(x, W, b, act, pre, y);
}

void ElementwiseRecorder::fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre,
                                              const View& dy, const View& dx, const View& dW, const View& db) {
  add_backward_gemms(x, dy, dx, dW);
  ObservedOps::fp8_linear_backward(x, W, act, pre, dy, dx, dW, db);
}

void ElementwiseRecorder::linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb,
                                             Activation act, const View& pre, const View& y) {
  add_forward_gemm(x, y);
  ObservedOps::linear_emb_forward(x, W, b, emb, act, pre, y);
}

void ElementwiseRecorder::linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act,
                                              const View& pre, const View& dy, const View& dx, const View& dW,
                                              const View& db) {
  add_backward_gemms(x, dy, dx, dW);
  ObservedOps::linear_emb_backward(x, W, emb, act, pre, dy, dx, dW, db);
}

void ElementwiseRecorder::add_forward_gemm(const View& x, const View& y) {
  pass().gemm_row_flops += 2.0 * double(x.cols) * double(y.cols);
}

void ElementwiseRecorder::add_backward_gemms(const View& x, const View& dy, const View& dx, const View& dW) {
  const int gemms = (dx.absent() ? 0 : 1) + (dW.absent() ? 0 : 1);
  const int64_t in = dx.absent() ? x.cols : dx.cols;  // x is needed for dW only
  pass().gemm_row_flops += 2.0 * gemms * double(in) * double(dy.cols);
}

void ElementwiseRecorder::add_elements(const char* op, const View& v) {
  ArithmeticWork& work = pass().arithmetic[op];
  work.elements += double(v.size()), work.rows += double(v.rows);
}

void ElementwiseRecorder::op_ended(const char* op, double bytes) {
  ElementwisePass& p = pass();
  p.op_calls += 1;
  if (std::string_view(op_kind(op)) != "elementwise") return;
  p.calls += 1, p.bytes += bytes;
  if (arithmetic(op)) p.arithmetic[op].bytes += bytes;
}

ElementwiseWork elementwise_work(const ModelConfig& c, const PackedBatch& batch, const std::vector<bool>& frozen,
                                 bool mixed_storage) {
  CpuOps reference;
  DryOps ops(reference, mixed_storage);
  const std::unique_ptr<Model> model = make_model(c, &ops);
  model->freeze(frozen);
  DryHooks hooks(model->params(), ops);
  const std::vector<double> denominators = model->loss_counts(batch);
  model->forward_backward(nullptr, nullptr, batch, 1, 0, denominators, &hooks);
  return ops.work;
}

ElementwiseWork ElementwiseFit::micro_batch(int samples) const {
  return {ElementwisePass::combined(fixed.fwd, samples, per_sample.fwd),
          ElementwisePass::combined(fixed.bwd, samples, per_sample.bwd)};
}

ElementwiseFit fit_elementwise_work(const ModelConfig& c, const PlanSample& shape, const std::vector<bool>& frozen,
                                    bool mixed_storage) {
  const ElementwiseWork one = elementwise_work(c, plan_micro_batch(c, 1, shape, true), frozen, mixed_storage);
  const ElementwiseWork two = elementwise_work(c, plan_micro_batch(c, 2, shape, true), frozen, mixed_storage);
  ElementwiseFit fit;
  fit.recompute = c.recompute;
  fit.per_sample = {ElementwisePass::combined(two.fwd, -1, one.fwd), ElementwisePass::combined(two.bwd, -1, one.bwd)};
  fit.fixed = {ElementwisePass::combined(one.fwd, -1, fit.per_sample.fwd),
               ElementwisePass::combined(one.bwd, -1, fit.per_sample.bwd)};
  return fit;
}

}  // namespace emb
