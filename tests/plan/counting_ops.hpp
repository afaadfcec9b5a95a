// An Ops that counts the calls made through it and forwards each to another backend: the
// planner's op-call count (src/plan/op_calls.hpp) checked against the calls a real step makes.
// Memory and ordering calls (allocate, upload, download, synchronize) forward uncounted; every
// op is counted under its name, and the bytes allocated and not yet freed are tracked.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kernels/ops.hpp"

namespace emb::test {

class CountingOps final : public Ops {
 public:
  explicit CountingOps(Ops& inner) : inner_(inner) {}

  // Op calls since the last reset, all ops together and by name.
  int64_t total() const {
    int64_t n = 0;
    for (const auto& [name, calls] : calls_) n += calls;
    return n;
  }
  const std::map<std::string, int64_t>& by_name() const { return calls_; }
  void reset() { calls_.clear(); }
  // Bytes allocated through this Ops and not freed yet.
  int64_t live_bytes() const { return live_bytes_; }

  const char* name() const override { return inner_.name(); }
  void* allocate(size_t bytes) override {
    void* p = inner_.allocate(bytes);
    sizes_[p] = int64_t(bytes), live_bytes_ += int64_t(bytes);
    return p;
  }
  void deallocate(void* p) override {
    live_bytes_ -= sizes_[p];
    sizes_.erase(p);
    inner_.deallocate(p);
  }
  void upload(void* dst, const void* src, size_t bytes) override { inner_.upload(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { inner_.download(dst, src, bytes); }
  void synchronize() override { inner_.synchronize(); }
  void* stream() const override { return inner_.stream(); }
  bool host_memory() const override { return inner_.host_memory(); }
  bool mixed_storage() const override { return inner_.mixed_storage(); }
  int64_t packed_linear_elements(int64_t in, int64_t out) const override {
    return inner_.packed_linear_elements(in, out);
  }

  void zero(const View& y) override { count("zero"), inner_.zero(y); }
  void copy(const View& x, const View& y) override { count("copy"), inner_.copy(x, y); }
  void convert(const View& x, const View& y) override { count("convert"), inner_.convert(x, y); }
  void add(const View& a, const View& b, const View& y) override { count("add"), inner_.add(a, b, y); }
  void add_bias(const View& y, const View& b) override { count("add_bias"), inner_.add_bias(y, b); }
  void copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override {
    count("copy_rows"), inner_.copy_rows(src, src_rows, dst, dst_rows);
  }
  void add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override {
    count("add_rows"), inner_.add_rows(src, src_rows, dst, dst_rows);
  }
  void column_sums(const View& x, const View& out) override { count("column_sums"), inner_.column_sums(x, out); }
  void activation_forward(Activation act, const View& x, const View& y) override {
    count("activation_forward"), inner_.activation_forward(act, x, y);
  }
  void activation_backward(Activation act, const View& x, const View& dy, const View& dx) override {
    count("activation_backward"), inner_.activation_backward(act, x, dy, dx);
  }
  void linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                      const View& y) override {
    count("linear_forward"), inner_.linear_forward(x, W, b, act, pre, y);
  }
  void linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy, const View& dx,
                       const View& dW, const View& db) override {
    count("linear_backward"), inner_.linear_backward(x, W, act, pre, dy, dx, dW, db);
  }
  void pack_linear(const View& W, const View& packed) override { count("pack_linear"), inner_.pack_linear(W, packed); }
  void packed_linear_forward(const View& x, const View& packed, const View& b, Activation act, const View& pre,
                             const View& y) override {
    count("packed_linear_forward"), inner_.packed_linear_forward(x, packed, b, act, pre, y);
  }
  void fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                          const View& y) override {
    count("fp8_linear_forward"), inner_.fp8_linear_forward(x, W, b, act, pre, y);
  }
  void fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                           const View& dx, const View& dW, const View& db) override {
    count("fp8_linear_backward"), inner_.fp8_linear_backward(x, W, act, pre, dy, dx, dW, db);
  }
  void linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                          const View& pre, const View& y) override {
    count("linear_emb_forward"), inner_.linear_emb_forward(x, W, b, emb, act, pre, y);
  }
  void linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                           const View& dy, const View& dx, const View& dW, const View& db) override {
    count("linear_emb_backward"), inner_.linear_emb_backward(x, W, emb, act, pre, dy, dx, dW, db);
  }
  void layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                         const View& rstd, float eps) override {
    count("layernorm_forward"), inner_.layernorm_forward(x, weight, bias, y, mean, rstd, eps);
  }
  void layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd, const View& dy,
                          const View& dx, const View& dweight, const View& dbias) override {
    count("layernorm_backward"), inner_.layernorm_backward(x, weight, mean, rstd, dy, dx, dweight, dbias);
  }
  void rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) override {
    count("rmsnorm_forward"), inner_.rmsnorm_forward(x, weight, y, rstd);
  }
  void rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                        const View& dweight) override {
    count("rmsnorm_backward"), inner_.rmsnorm_backward(x, weight, rstd, dy, dx, dweight);
  }
  void norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed, const View& y,
                             const View& mean, const View& rstd, float eps) override {
    count("norm_modulate_forward"), inner_.norm_modulate_forward(x, scale, shift, normed, y, mean, rstd, eps);
  }
  void norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean, const View& rstd,
                              const View& dy, const View& dx, const View& dscale, const View& dshift) override {
    count("norm_modulate_backward"),
        inner_.norm_modulate_backward(x, normed, scale, mean, rstd, dy, dx, dscale, dshift);
  }
  void gated_residual_forward(const View& x, const View& gate, const View& y) override {
    count("gated_residual_forward"), inner_.gated_residual_forward(x, gate, y);
  }
  void residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                      const View& scale, const View& shift, const View& normed, const View& y,
                                      const View& mean, const View& rstd, float eps) override {
    count("residual_norm_modulate_forward"),
        inner_.residual_norm_modulate_forward(x, gate, r, x_in, scale, shift, normed, y, mean, rstd, eps);
  }
  void gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                               const View& dgate) override {
    count("gated_residual_backward"), inner_.gated_residual_backward(gate, y, dx, dy, dgate);
  }
  void attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                         const AttnConfig& cfg, const AttnIndex& idx) override {
    count("attention_forward"), inner_.attention_forward(q, k, v, out, lse, cfg, idx);
  }
  void attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                          const View& dout, const View& dq, const View& dk, const View& dv, const AttnConfig& cfg,
                          const AttnIndex& idx) override {
    count("attention_backward"), inner_.attention_backward(q, k, v, out, lse, dout, dq, dk, dv, cfg, idx);
  }
  void rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) override {
    count("rope_forward"), inner_.rope_forward(x, pos, cfg);
  }
  void rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) override {
    count("rope_backward"), inner_.rope_backward(dx, pos, cfg);
  }
  void dropout_forward(const View& x, const View& y, const DropoutConfig& cfg, const DropoutRows& rows) override {
    count("dropout_forward"), inner_.dropout_forward(x, y, cfg, rows);
  }
  void dropout_backward(const View& dy, const View& dx, const DropoutConfig& cfg, const DropoutRows& rows) override {
    count("dropout_backward"), inner_.dropout_backward(dy, dx, cfg, rows);
  }
  void encoder_attention_forward(const View& q, const View& k, const View& v, const View& bias,
                                 const AttnBias& bias_kind, const View& out, const View& lse,
                                 const EncoderAttnConfig& cfg, const AttnSegments& segments) override {
    count("encoder_attention_forward"),
        inner_.encoder_attention_forward(q, k, v, bias, bias_kind, out, lse, cfg, segments);
  }
  void rope_half_forward(const View& x, const int32_t* pos, const RopeHalfConfig& cfg) override {
    count("rope_half_forward"), inner_.rope_half_forward(x, pos, cfg);
  }
  void rope_half_backward(const View& dx, const int32_t* pos, const RopeHalfConfig& cfg) override {
    count("rope_half_backward"), inner_.rope_half_backward(dx, pos, cfg);
  }
  void gated_activation_forward(Activation act, const View& gate, const View& up, const View& y) override {
    count("gated_activation_forward"), inner_.gated_activation_forward(act, gate, up, y);
  }
  void gated_activation_backward(Activation act, const View& gate, const View& up, const View& dy, const View& dgate,
                                 const View& dup) override {
    count("gated_activation_backward"), inner_.gated_activation_backward(act, gate, up, dy, dgate, dup);
  }
  void conv3d_forward(const View& x, const View& weight, const View& bias, const View& y,
                      const ConvConfig& cfg) override {
    count("conv3d_forward"), inner_.conv3d_forward(x, weight, bias, y, cfg);
  }
  void pixel_unshuffle_forward(const View& x, const View& y, const UnshuffleConfig& cfg) override {
    count("pixel_unshuffle_forward"), inner_.pixel_unshuffle_forward(x, y, cfg);
  }
  void channel_rmsnorm_forward(const View& x, const View& gamma, Activation act, const View& y) override {
    count("channel_rmsnorm_forward"), inner_.channel_rmsnorm_forward(x, gamma, act, y);
  }
  void sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) override {
    count("sinus_embedding"), inner_.sinus_embedding(t, out, cfg);
  }
  void flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t, const RowIndex& t_rows,
                        const View& y) override {
    count("flow_interpolate"), inner_.flow_interpolate(u, w, src_rows, t, t_rows, y);
  }
  void mse_loss(const View& pred, const View& plus, const View& minus, const View& mask, const RowIndex& target_rows,
                const RowIndex& target_cols, const LossConfig& cfg, const View& dpred, double* sum) override {
    count("mse_loss"), inner_.mse_loss(pred, plus, minus, mask, target_rows, target_cols, cfg, dpred, sum);
  }
  void sum_squares(const View& g, double* out) override { count("sum_squares"), inner_.sum_squares(g, out); }
  void adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                  int64_t step, float grad_scale, float decay_mult) override {
    count("adamw_step"), inner_.adamw_step(param, grad, m, v, cfg, step, grad_scale, decay_mult);
  }

 private:
  void count(const char* op) { ++calls_[op]; }
  Ops& inner_;
  std::map<std::string, int64_t> calls_;
  std::map<void*, int64_t> sizes_;  // of each live allocation
  int64_t live_bytes_ = 0;
};

}  // namespace emb::test
