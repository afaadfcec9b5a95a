// An Ops that forwards every call to another backend and tells the class above it when each op
// starts and ends: the planner tests' op counts (tests/plan/counting_ops.hpp) and a run's op
// profile (train/op_profile.hpp). Memory, ordering and error calls (allocate, upload, download,
// synchronize, the input slots, the device clock) forward unobserved. CUDA graphs do not: an
// observed backend runs its ops one at a time (begin_graph() is false), so that what is observed
// is the op itself, not its capture.
#pragma once
#include <algorithm>
#include <memory>

#include "kernels/input_slots.hpp"
#include "kernels/ops.hpp"
#include "kernels/ops_check.hpp"

namespace emb {

class ObservedOps : public Ops {
 public:
  // run_ops = false: the ops are observed and not run (the planner's dry step,
  // plan/elementwise_work.cpp, whose subclass gives the memory calls their stand-ins).
  explicit ObservedOps(Ops& inner, bool run_ops = true) : inner_(inner), run_ops_(run_ops) {}

  const char* name() const override { return inner_.name(); }
  void* allocate(size_t bytes) override { return inner_.allocate(bytes); }
  void deallocate(void* p) override { inner_.deallocate(p); }
  void upload(void* dst, const void* src, size_t bytes) override { inner_.upload(dst, src, bytes); }
  std::unique_ptr<InputSlots> make_input_slots() override { return inner_.make_input_slots(); }
  void download(void* dst, const void* src, size_t bytes) override { inner_.download(dst, src, bytes); }
  void synchronize() override { inner_.synchronize(); }
  void* stream() const override { return inner_.stream(); }
  bool host_memory() const override { return inner_.host_memory(); }
  bool mixed_storage() const override { return inner_.mixed_storage(); }
  size_t device_peak_bytes() const override { return inner_.device_peak_bytes(); }
  size_t blas_workspace_bytes() const override { return inner_.blas_workspace_bytes(); }
  void check_deferred_errors() override { inner_.check_deferred_errors(); }
  DeviceClock* device_clock() override { return inner_.device_clock(); }
  int64_t packed_linear_elements(int64_t in, int64_t out) const override {
    return inner_.packed_linear_elements(in, out);
  }

  void zero(const View& y) override {
    observe("zero", touched(y), [&] { inner_.zero(y); });
  }
  void copy(const View& x, const View& y) override {
    observe("copy", touched(x, y), [&] { inner_.copy(x, y); });
  }
  void convert(const View& x, const View& y) override {
    observe("convert", touched(x, y), [&] { inner_.convert(x, y); });
  }
  void add(const View& a, const View& b, const View& y) override {
    observe("add", touched(a, b, y), [&] { inner_.add(a, b, y); });
  }
  void add_bias(const View& y, const View& b) override {
    observe("add_bias", touched(y, b), [&] { inner_.add_bias(y, b); });
  }
  void copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override {
    observe("copy_rows", indexed_rows(src, src_rows, dst_rows),
            [&] { inner_.copy_rows(src, src_rows, dst, dst_rows); });
  }
  void add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override {
    observe("add_rows", indexed_rows(src, src_rows, dst_rows), [&] { inner_.add_rows(src, src_rows, dst, dst_rows); });
  }
  void column_sums(const View& x, const View& out) override {
    observe("column_sums", touched(x, out), [&] { inner_.column_sums(x, out); });
  }
  void activation_forward(Activation act, const View& x, const View& y) override {
    observe("activation_forward", touched(x, y), [&] { inner_.activation_forward(act, x, y); });
  }
  void activation_backward(Activation act, const View& x, const View& dy, const View& dx) override {
    observe("activation_backward", touched(x, dy, dx), [&] { inner_.activation_backward(act, x, dy, dx); });
  }
  void linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                      const View& y) override {
    observe("linear_forward", touched(x, W, b, pre, y), [&] { inner_.linear_forward(x, W, b, act, pre, y); });
  }
  void linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy, const View& dx,
                       const View& dW, const View& db) override {
    observe("linear_backward", touched(x, W, pre, dy, dx, dW, db),
            [&] { inner_.linear_backward(x, W, act, pre, dy, dx, dW, db); });
  }
  void pack_linear(const View& W, const View& packed) override {
    observe("pack_linear", touched(W, packed), [&] { inner_.pack_linear(W, packed); });
  }
  void packed_linear_forward(const View& x, const View& packed, const View& b, Activation act, const View& pre,
                             const View& y) override {
    observe("packed_linear_forward", touched(x, packed, b, pre, y),
            [&] { inner_.packed_linear_forward(x, packed, b, act, pre, y); });
  }
  void fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                          const View& y) override {
    observe("fp8_linear_forward", touched(x, W, b, pre, y), [&] { inner_.fp8_linear_forward(x, W, b, act, pre, y); });
  }
  void fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                           const View& dx, const View& dW, const View& db) override {
    observe("fp8_linear_backward", touched(x, W, pre, dy, dx, dW, db),
            [&] { inner_.fp8_linear_backward(x, W, act, pre, dy, dx, dW, db); });
  }
  void linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                          const View& pre, const View& y) override {
    observe("linear_emb_forward", touched(x, W, b, pre, y),
            [&] { inner_.linear_emb_forward(x, W, b, emb, act, pre, y); });
  }
  void linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                           const View& dy, const View& dx, const View& dW, const View& db) override {
    observe("linear_emb_backward", touched(x, W, pre, dy, dx, dW, db),
            [&] { inner_.linear_emb_backward(x, W, emb, act, pre, dy, dx, dW, db); });
  }
  void layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                         const View& rstd, float eps) override {
    observe("layernorm_forward", touched(x, weight, bias, y, mean, rstd),
            [&] { inner_.layernorm_forward(x, weight, bias, y, mean, rstd, eps); });
  }
  void layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd, const View& dy,
                          const View& dx, const View& dweight, const View& dbias) override {
    observe("layernorm_backward", touched(x, weight, mean, rstd, dy, dx, dweight, dbias),
            [&] { inner_.layernorm_backward(x, weight, mean, rstd, dy, dx, dweight, dbias); });
  }
  void rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) override {
    observe("rmsnorm_forward", touched(x, weight, y, rstd), [&] { inner_.rmsnorm_forward(x, weight, y, rstd); });
  }
  void rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                        const View& dweight) override {
    observe("rmsnorm_backward", touched(x, weight, rstd, dy, dx, dweight),
            [&] { inner_.rmsnorm_backward(x, weight, rstd, dy, dx, dweight); });
  }
  void norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed, const View& y,
                             const View& mean, const View& rstd, float eps) override {
    observe("norm_modulate_forward", touched(x, scale, shift, normed, y, mean, rstd),
            [&] { inner_.norm_modulate_forward(x, scale, shift, normed, y, mean, rstd, eps); });
  }
  void norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean, const View& rstd,
                              const View& dy, const View& dx, const View& dscale, const View& dshift) override {
    observe("norm_modulate_backward", touched(x, normed, scale, mean, rstd, dy, dx, dscale, dshift),
            [&] { inner_.norm_modulate_backward(x, normed, scale, mean, rstd, dy, dx, dscale, dshift); });
  }
  void gated_residual_forward(const View& x, const View& gate, const View& y) override {
    observe("gated_residual_forward", touched(x, gate, y), [&] { inner_.gated_residual_forward(x, gate, y); });
  }
  void residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                      const View& scale, const View& shift, const View& normed, const View& y,
                                      const View& mean, const View& rstd, float eps) override {
    observe("residual_norm_modulate_forward", touched(x, gate, r, x_in, scale, shift, normed, y, mean, rstd),
            [&] { inner_.residual_norm_modulate_forward(x, gate, r, x_in, scale, shift, normed, y, mean, rstd, eps); });
  }
  void gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                               const View& dgate) override {
    observe("gated_residual_backward", touched(gate, y, dx, dy, dgate),
            [&] { inner_.gated_residual_backward(gate, y, dx, dy, dgate); });
  }
  void attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                         const AttnConfig& cfg, const AttnIndex& idx) override {
    observe("attention_forward", touched(q, k, v, out, lse),
            [&] { inner_.attention_forward(q, k, v, out, lse, cfg, idx); });
  }
  void attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                          const View& dout, const View& dq, const View& dk, const View& dv, const AttnConfig& cfg,
                          const AttnIndex& idx) override {
    observe("attention_backward", touched(q, k, v, out, lse, dout, dq, dk, dv),
            [&] { inner_.attention_backward(q, k, v, out, lse, dout, dq, dk, dv, cfg, idx); });
  }
  void rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) override {
    observe("rope_forward", touched(x), [&] { inner_.rope_forward(x, pos, cfg); });
  }
  void rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) override {
    observe("rope_backward", touched(dx), [&] { inner_.rope_backward(dx, pos, cfg); });
  }
  void dropout_forward(const View& x, const View& y, const DropoutConfig& cfg, const DropoutRows& rows) override {
    observe("dropout_forward", touched(x, y), [&] { inner_.dropout_forward(x, y, cfg, rows); });
  }
  void dropout_backward(const View& dy, const View& dx, const DropoutConfig& cfg, const DropoutRows& rows) override {
    observe("dropout_backward", touched(dy, dx), [&] { inner_.dropout_backward(dy, dx, cfg, rows); });
  }
  void encoder_attention_forward(const View& q, const View& k, const View& v, const View& bias,
                                 const AttnBias& bias_kind, const View& out, const View& lse,
                                 const EncoderAttnConfig& cfg, const AttnSegments& segments) override {
    observe("encoder_attention_forward", touched(q, k, v, bias, out, lse),
            [&] { inner_.encoder_attention_forward(q, k, v, bias, bias_kind, out, lse, cfg, segments); });
  }
  void rope_half_forward(const View& x, const int32_t* pos, const RopeHalfConfig& cfg) override {
    observe("rope_half_forward", touched(x), [&] { inner_.rope_half_forward(x, pos, cfg); });
  }
  void rope_half_backward(const View& dx, const int32_t* pos, const RopeHalfConfig& cfg) override {
    observe("rope_half_backward", touched(dx), [&] { inner_.rope_half_backward(dx, pos, cfg); });
  }
  void gated_activation_forward(Activation act, const View& gate, const View& up, const View& y) override {
    observe("gated_activation_forward", touched(gate, up, y),
            [&] { inner_.gated_activation_forward(act, gate, up, y); });
  }
  void gated_activation_backward(Activation act, const View& gate, const View& up, const View& dy, const View& dgate,
                                 const View& dup) override {
    observe("gated_activation_backward", touched(gate, up, dy, dgate, dup),
            [&] { inner_.gated_activation_backward(act, gate, up, dy, dgate, dup); });
  }
  void conv3d_forward(const View& x, const View& weight, const View& bias, const View& y,
                      const ConvConfig& cfg) override {
    observe("conv3d_forward", touched(x, weight, bias, y), [&] { inner_.conv3d_forward(x, weight, bias, y, cfg); });
  }
  void packed_conv3d_forward(const View& x, const View& packed, const View& bias, const View& y,
                             const ConvConfig& cfg) override {
    observe("packed_conv3d_forward", touched(x, packed, bias, y),
            [&] { inner_.packed_conv3d_forward(x, packed, bias, y, cfg); });
  }
  void pixel_unshuffle_forward(const View& x, const View& y, const UnshuffleConfig& cfg) override {
    observe("pixel_unshuffle_forward", touched(x, y), [&] { inner_.pixel_unshuffle_forward(x, y, cfg); });
  }
  void channel_rmsnorm_forward(const View& x, const View& gamma, Activation act, const View& y) override {
    observe("channel_rmsnorm_forward", touched(x, gamma, y), [&] { inner_.channel_rmsnorm_forward(x, gamma, act, y); });
  }
  void sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) override {
    observe("sinus_embedding", touched(t, out), [&] { inner_.sinus_embedding(t, out, cfg); });
  }
  void flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t, const RowIndex& t_rows,
                        const View& y) override {
    observe("flow_interpolate", touched(first_rows(u, y.rows), first_rows(w, y.rows), y),
            [&] { inner_.flow_interpolate(u, w, src_rows, t, t_rows, y); });
  }
  void mse_loss(const View& pred, const View& plus, const View& minus, const View& mask, const RowIndex& target_rows,
                const RowIndex& target_cols, const LossConfig& cfg, const View& dpred, double* sum) override {
    observe("mse_loss", touched(pred, first_rows(plus, pred.rows), first_rows(minus, pred.rows), mask, dpred),
            [&] { inner_.mse_loss(pred, plus, minus, mask, target_rows, target_cols, cfg, dpred, sum); });
  }
  void sum_squares(const View& g, double* out) override {
    observe("sum_squares", touched(g), [&] { inner_.sum_squares(g, out); });
  }
  void adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                  int64_t step, float grad_scale, float decay_mult) override {
    observe("adamw_step", touched(param, grad, m, v),
            [&] { inner_.adamw_step(param, grad, m, v, cfg, step, grad_scale, decay_mult); });
  }

 protected:
  // `op` (the Ops method's name, a string literal) is about to run / has returned, having been
  // given views of `bytes` (touched). An op that throws ends unobserved.
  virtual void op_started(const char* op) = 0;
  virtual void op_ended(const char* op, double bytes) = 0;
  Ops& inner() { return inner_; }

 private:
  // The bytes of the views an op is given, each counted once, absent ones none: what its tensors
  // hold, the traffic of an op that reads or writes each of them once from memory (its weights
  // and the bias included; in-place ops count their tensor once).
  static double bytes_of(const View& v) { return v.absent() ? 0.0 : double(v.size()) * double(dtype_size(v.dtype)); }
  template <class... Views>
  static double touched(const Views&... views) {
    return (0.0 + ... + bytes_of(views));
  }
  // The first n rows of v (at most all of them): the rows an op indexes.
  static View first_rows(const View& v, int64_t n) { return View{v.data, v.dtype, std::min(n, v.rows), v.cols, v.ld}; }
  // A row copy's source and destination rows (kernels/ops.hpp copy_rows: n rows each).
  static double indexed_rows(const View& src, const RowIndex& src_rows, const RowIndex& dst_rows) {
    return 2 * bytes_of(first_rows(src, row_count(src, src_rows, dst_rows)));
  }
  template <class Call>
  void observe(const char* op, double bytes, Call&& call) {
    op_started(op);
    if (run_ops_) call();
    op_ended(op, bytes);
  }
  Ops& inner_;
  bool run_ops_;
};

}  // namespace emb
