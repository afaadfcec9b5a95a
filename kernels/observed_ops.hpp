// An Ops that forwards every call to another backend and tells the class above it when each op
// starts and ends: the planner tests' op counts (tests/plan/counting_ops.hpp) and a run's op
// profile (train/op_profile.hpp). Memory, ordering and error calls (allocate, upload, download,
// synchronize, the input slots, the device clock) forward unobserved. CUDA graphs do not: an
// observed backend runs its ops one at a time (begin_graph() is false), so that what is observed
// is the op itself, not its capture.
#pragma once
#include <memory>

#include "kernels/input_slots.hpp"
#include "kernels/ops.hpp"

namespace emb {

class ObservedOps : public Ops {
 public:
  explicit ObservedOps(Ops& inner) : inner_(inner) {}

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

  void zero(const View& y) override { observe("zero", [&] { inner_.zero(y); }); }
  void copy(const View& x, const View& y) override { observe("copy", [&] { inner_.copy(x, y); }); }
  void convert(const View& x, const View& y) override { observe("convert", [&] { inner_.convert(x, y); }); }
  void add(const View& a, const View& b, const View& y) override { observe("add", [&] { inner_.add(a, b, y); }); }
  void add_bias(const View& y, const View& b) override { observe("add_bias", [&] { inner_.add_bias(y, b); }); }
  void copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override {
    observe("copy_rows", [&] { inner_.copy_rows(src, src_rows, dst, dst_rows); });
  }
  void add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override {
    observe("add_rows", [&] { inner_.add_rows(src, src_rows, dst, dst_rows); });
  }
  void column_sums(const View& x, const View& out) override { observe("column_sums", [&] { inner_.column_sums(x, out); }); }
  void activation_forward(Activation act, const View& x, const View& y) override {
    observe("activation_forward", [&] { inner_.activation_forward(act, x, y); });
  }
  void activation_backward(Activation act, const View& x, const View& dy, const View& dx) override {
    observe("activation_backward", [&] { inner_.activation_backward(act, x, dy, dx); });
  }
  void linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                      const View& y) override {
    observe("linear_forward", [&] { inner_.linear_forward(x, W, b, act, pre, y); });
  }
  void linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy, const View& dx,
                       const View& dW, const View& db) override {
    observe("linear_backward", [&] { inner_.linear_backward(x, W, act, pre, dy, dx, dW, db); });
  }
  void pack_linear(const View& W, const View& packed) override { observe("pack_linear", [&] { inner_.pack_linear(W, packed); }); }
  void packed_linear_forward(const View& x, const View& packed, const View& b, Activation act, const View& pre,
                             const View& y) override {
    observe("packed_linear_forward", [&] { inner_.packed_linear_forward(x, packed, b, act, pre, y); });
  }
  void fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                          const View& y) override {
    observe("fp8_linear_forward", [&] { inner_.fp8_linear_forward(x, W, b, act, pre, y); });
  }
  void fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                           const View& dx, const View& dW, const View& db) override {
    observe("fp8_linear_backward", [&] { inner_.fp8_linear_backward(x, W, act, pre, dy, dx, dW, db); });
  }
  void linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                          const View& pre, const View& y) override {
    observe("linear_emb_forward", [&] { inner_.linear_emb_forward(x, W, b, emb, act, pre, y); });
  }
  void linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                           const View& dy, const View& dx, const View& dW, const View& db) override {
    observe("linear_emb_backward", [&] { inner_.linear_emb_backward(x, W, emb, act, pre, dy, dx, dW, db); });
  }
  void layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                         const View& rstd, float eps) override {
    observe("layernorm_forward", [&] { inner_.layernorm_forward(x, weight, bias, y, mean, rstd, eps); });
  }
  void layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd, const View& dy,
                          const View& dx, const View& dweight, const View& dbias) override {
    observe("layernorm_backward", [&] { inner_.layernorm_backward(x, weight, mean, rstd, dy, dx, dweight, dbias); });
  }
  void rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) override {
    observe("rmsnorm_forward", [&] { inner_.rmsnorm_forward(x, weight, y, rstd); });
  }
  void rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                        const View& dweight) override {
    observe("rmsnorm_backward", [&] { inner_.rmsnorm_backward(x, weight, rstd, dy, dx, dweight); });
  }
  void norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed, const View& y,
                             const View& mean, const View& rstd, float eps) override {
    observe("norm_modulate_forward", [&] { inner_.norm_modulate_forward(x, scale, shift, normed, y, mean, rstd, eps); });
  }
  void norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean, const View& rstd,
                              const View& dy, const View& dx, const View& dscale, const View& dshift) override {
    observe("norm_modulate_backward", [&] { inner_.norm_modulate_backward(x, normed, scale, mean, rstd, dy, dx, dscale, dshift); });
  }
  void gated_residual_forward(const View& x, const View& gate, const View& y) override {
    observe("gated_residual_forward", [&] { inner_.gated_residual_forward(x, gate, y); });
  }
  void residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                      const View& scale, const View& shift, const View& normed, const View& y,
                                      const View& mean, const View& rstd, float eps) override {
    observe("residual_norm_modulate_forward", [&] { inner_.residual_norm_modulate_forward(x, gate, r, x_in, scale, shift, normed, y, mean, rstd, eps); });
  }
  void gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                               const View& dgate) override {
    observe("gated_residual_backward", [&] { inner_.gated_residual_backward(gate, y, dx, dy, dgate); });
  }
  void attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                         const AttnConfig& cfg, const AttnIndex& idx) override {
    observe("attention_forward", [&] { inner_.attention_forward(q, k, v, out, lse, cfg, idx); });
  }
  void attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                          const View& dout, const View& dq, const View& dk, const View& dv, const AttnConfig& cfg,
                          const AttnIndex& idx) override {
    observe("attention_backward", [&] { inner_.attention_backward(q, k, v, out, lse, dout, dq, dk, dv, cfg, idx); });
  }
  void rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) override {
    observe("rope_forward", [&] { inner_.rope_forward(x, pos, cfg); });
  }
  void rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) override {
    observe("rope_backward", [&] { inner_.rope_backward(dx, pos, cfg); });
  }
  void dropout_forward(const View& x, const View& y, const DropoutConfig& cfg, const DropoutRows& rows) override {
    observe("dropout_forward", [&] { inner_.dropout_forward(x, y, cfg, rows); });
  }
  void dropout_backward(const View& dy, const View& dx, const DropoutConfig& cfg, const DropoutRows& rows) override {
    observe("dropout_backward", [&] { inner_.dropout_backward(dy, dx, cfg, rows); });
  }
  void encoder_attention_forward(const View& q, const View& k, const View& v, const View& bias,
                                 const AttnBias& bias_kind, const View& out, const View& lse,
                                 const EncoderAttnConfig& cfg, const AttnSegments& segments) override {
    observe("encoder_attention_forward", [&] { inner_.encoder_attention_forward(q, k, v, bias, bias_kind, out, lse, cfg, segments); });
  }
  void rope_half_forward(const View& x, const int32_t* pos, const RopeHalfConfig& cfg) override {
    observe("rope_half_forward", [&] { inner_.rope_half_forward(x, pos, cfg); });
  }
  void rope_half_backward(const View& dx, const int32_t* pos, const RopeHalfConfig& cfg) override {
    observe("rope_half_backward", [&] { inner_.rope_half_backward(dx, pos, cfg); });
  }
  void gated_activation_forward(Activation act, const View& gate, const View& up, const View& y) override {
    observe("gated_activation_forward", [&] { inner_.gated_activation_forward(act, gate, up, y); });
  }
  void gated_activation_backward(Activation act, const View& gate, const View& up, const View& dy, const View& dgate,
                                 const View& dup) override {
    observe("gated_activation_backward", [&] { inner_.gated_activation_backward(act, gate, up, dy, dgate, dup); });
  }
  void conv3d_forward(const View& x, const View& weight, const View& bias, const View& y,
                      const ConvConfig& cfg) override {
    observe("conv3d_forward", [&] { inner_.conv3d_forward(x, weight, bias, y, cfg); });
  }
  void packed_conv3d_forward(const View& x, const View& packed, const View& bias, const View& y,
                             const ConvConfig& cfg) override {
    observe("packed_conv3d_forward", [&] { inner_.packed_conv3d_forward(x, packed, bias, y, cfg); });
  }
  void pixel_unshuffle_forward(const View& x, const View& y, const UnshuffleConfig& cfg) override {
    observe("pixel_unshuffle_forward", [&] { inner_.pixel_unshuffle_forward(x, y, cfg); });
  }
  void channel_rmsnorm_forward(const View& x, const View& gamma, Activation act, const View& y) override {
    observe("channel_rmsnorm_forward", [&] { inner_.channel_rmsnorm_forward(x, gamma, act, y); });
  }
  void sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) override {
    observe("sinus_embedding", [&] { inner_.sinus_embedding(t, out, cfg); });
  }
  void flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t, const RowIndex& t_rows,
                        const View& y) override {
    observe("flow_interpolate", [&] { inner_.flow_interpolate(u, w, src_rows, t, t_rows, y); });
  }
  void mse_loss(const View& pred, const View& plus, const View& minus, const View& mask, const RowIndex& target_rows,
                const RowIndex& target_cols, const LossConfig& cfg, const View& dpred, double* sum) override {
    observe("mse_loss", [&] { inner_.mse_loss(pred, plus, minus, mask, target_rows, target_cols, cfg, dpred, sum); });
  }
  void sum_squares(const View& g, double* out) override { observe("sum_squares", [&] { inner_.sum_squares(g, out); }); }
  void adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                  int64_t step, float grad_scale, float decay_mult) override {
    observe("adamw_step", [&] { inner_.adamw_step(param, grad, m, v, cfg, step, grad_scale, decay_mult); });
  }

 protected:
  // `op` (the Ops method's name, a string literal) is about to run / has returned. An op that
  // throws ends unobserved.
  virtual void op_started(const char* op) = 0;
  virtual void op_ended(const char* op) = 0;
  Ops& inner() { return inner_; }

 private:
  template <class Call>
  void observe(const char* op, Call&& call) {
    op_started(op);
    call();
    op_ended(op);
  }
  Ops& inner_;
};

}  // namespace emb
