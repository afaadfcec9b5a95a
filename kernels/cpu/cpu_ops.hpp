// CpuOps: the Ops interface (kernels/ops.hpp) on the host, over the reference kernels of this
// folder, unchanged. Where the interface fuses (a linear with its activation, norm + modulate)
// it runs the kernels one after the other, so results are bit-identical to calling them
// directly. Memory is host memory, upload/download are memcpy, and every op returns when done
// (there is no stream). The FP8 linears run the reference recipe (fp8_linear.hpp). Only fp32
// views; most kernels also need contiguous rows (ld = cols), except the row ops, column sums and
// the modulation chunks (scale, shift, gate).
// This class keeps what is not an op (cpu_ops.cpp: memory, copies, scratch); each op's entry is
// defined in the file of its kernels (op_entry.hpp; kernels/README.md lists them).
#pragma once
#include <vector>

#include "kernels/ops.hpp"

namespace emb {

class CpuOps final : public Ops {
 public:
  const char* name() const override { return "cpu"; }

  void* allocate(size_t bytes) override;
  void deallocate(void* p) override;
  void upload(void* dst, const void* src, size_t bytes) override;
  void download(void* dst, const void* src, size_t bytes) override;
  void synchronize() override {}
  void* stream() const override { return nullptr; }
  bool host_memory() const override { return true; }

  void zero(const View& y) override;
  void copy(const View& x, const View& y) override;
  void convert(const View& x, const View& y) override;
  void add(const View& a, const View& b, const View& y) override;
  void add_bias(const View& y, const View& b) override;
  void copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override;
  void add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override;
  void column_sums(const View& x, const View& out) override;

  void activation_forward(Activation act, const View& x, const View& y) override;
  void activation_backward(Activation act, const View& x, const View& dy, const View& dx) override;

  void linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                      const View& y) override;
  void linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                       const View& dx, const View& dW, const View& db) override;
  int64_t packed_linear_elements(int64_t in, int64_t out) const override;
  void pack_linear(const View& W, const View& packed) override;
  void packed_linear_forward(const View& x, const View& packed, const View& b, Activation act, const View& pre,
                             const View& y) override;
  void fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                          const View& y) override;
  void fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                           const View& dx, const View& dW, const View& db) override;
  void linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                          const View& pre, const View& y) override;
  void linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                           const View& dy, const View& dx, const View& dW, const View& db) override;

  void layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                         const View& rstd, float eps) override;
  void layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd, const View& dy,
                          const View& dx, const View& dweight, const View& dbias) override;
  void rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) override;
  void rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                        const View& dweight) override;
  void norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                             const View& y, const View& mean, const View& rstd, float eps) override;
  void norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                              const View& rstd, const View& dy, const View& dx, const View& dscale,
                              const View& dshift) override;
  void gated_residual_forward(const View& x, const View& gate, const View& y) override;
  void residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                      const View& scale, const View& shift, const View& normed, const View& y,
                                      const View& mean, const View& rstd, float eps) override;
  void gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                               const View& dgate) override;

  void attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                         const AttnConfig& cfg, const AttnIndex& idx) override;
  void attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                          const View& dout, const View& dq, const View& dk, const View& dv, const AttnConfig& cfg,
                          const AttnIndex& idx) override;
  void rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) override;
  void rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) override;

  void dropout_forward(const View& x, const View& y, const DropoutConfig& cfg, const DropoutRows& rows) override;
  void dropout_backward(const View& dy, const View& dx, const DropoutConfig& cfg, const DropoutRows& rows) override;
  void encoder_attention_forward(const View& q, const View& k, const View& v, const View& bias,
                                 const AttnBias& bias_kind, const View& out, const View& lse,
                                 const EncoderAttnConfig& cfg, const AttnSegments& segments) override;
  void rope_half_forward(const View& x, const int32_t* pos, const RopeHalfConfig& cfg) override;
  void rope_half_backward(const View& dx, const int32_t* pos, const RopeHalfConfig& cfg) override;
  void gated_activation_forward(Activation act, const View& gate, const View& up, const View& y) override;
  void gated_activation_backward(Activation act, const View& gate, const View& up, const View& dy,
                                 const View& dgate, const View& dup) override;
  void conv3d_forward(const View& x, const View& weight, const View& bias, const View& y,
                      const ConvConfig& cfg) override;
  void packed_conv3d_forward(const View& x, const View& packed, const View& bias, const View& y,
                             const ConvConfig& cfg) override;
  void pixel_unshuffle_forward(const View& x, const View& y, const UnshuffleConfig& cfg) override;
  void channel_rmsnorm_forward(const View& x, const View& gamma, Activation act, const View& y) override;

  void sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) override;
  void flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                        const RowIndex& t_rows, const View& y) override;
  void mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg, const View& dpred,
                double* sum) override;

  void sum_squares(const View& g, double* out) override;
  void adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                  int64_t step, float grad_scale, float decay_mult) override;

 private:
  // The gradient of a fused epilogue's input (linear's dpre, norm_modulate's dn), zeroed per use.
  float* scratch(int64_t n);
  // The gradient at a linear's activation input: dy itself without an activation, else
  // dy·act'(pre) in scratch.
  const float* activation_input_gradient(Activation act, const View& pre, const View& dy);
  std::vector<float> scratch_;
};

}  // namespace emb
