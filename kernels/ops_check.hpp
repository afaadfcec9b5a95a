// The shape rules of kernels/ops.hpp, shared by every backend so a bad call is the same error
// on all of them: one line "op: what; x [N, in], W [in, out], ..." (emb::Error). Every op's
// entry calls its rule first (check_<op>, or the rule of its family), then checks what its
// backend supports (dtypes with OpCheck::dtypes, contiguity with OpCheck::contiguous, head dims,
// ...); a rule here is about shapes, presence and index lengths only, never about a backend.
#pragma once
#include <array>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kernels/ops.hpp"

namespace emb {

class OpCheck {
 public:
  using Named = std::pair<const char*, const View*>;
  // `op` is the op's name (a literal: it outlives the check). The views are held inline: an op
  // call constructs its check on every call, and a heap allocation here was a step's most
  // frequent malloc.
  OpCheck(const char* op, std::initializer_list<Named> views);

  // Throws "op: what; name [shape], ..." unless ok. The message's parts are joined (emb::str)
  // only when the check fails: an op call runs a dozen checks, and building their messages
  // up front was most of its host time.
  template <class... What>
  void expect(bool ok, const What&... what) const {
    if (!ok) fail(str(what...));
  }
  [[noreturn]] void fail(const std::string& what) const;
  // Every present view has cols ≤ ld and a non-negative size.
  void well_formed() const;
  // Every present view is contiguous (ld = cols): those of the check, or the ones named.
  void contiguous() const;
  void contiguous(std::initializer_list<Named> views) const;
  // Every present view has one of the dtypes (the backend's supported set).
  void dtypes(std::initializer_list<DType> supported) const;
  // Views a and b (both present) have the same rows and cols.
  void same_shape(const View& a, const View& b, const char* a_name, const char* b_name) const;

 private:
  const Named* begin() const { return views_.data(); }
  const Named* end() const { return views_.data() + n_views_; }

  static constexpr size_t kMaxViews = 12;  // the largest rule names 10
  const char* op_;
  std::array<Named, kMaxViews> views_{};
  size_t n_views_ = 0;
};

// The rules of each op, in the order of ops.hpp (the names are the op's).
// ---- elementwise and rows ----
OpCheck check_zero(const View& y);
// Every view present, all of one shape.
OpCheck check_elementwise(const char* op, std::initializer_list<OpCheck::Named> views);
// convert: x and y the same shape, contiguous, each fp32 or bf16.
OpCheck check_convert(const View& x, const View& y);
OpCheck check_add_bias(const View& y, const View& b);
OpCheck check_rows(const char* op, const View& src, const RowIndex& src_rows, const View& dst,
                   const RowIndex& dst_rows);
// The rows copy_rows and add_rows move: a present index's length, else src's rows.
int64_t row_count(const View& src, const RowIndex& src_rows, const RowIndex& dst_rows);
OpCheck check_column_sums(const View& x, const View& out);
// ---- activations ----
OpCheck check_activation(const char* op, Activation act, std::initializer_list<OpCheck::Named> views);
// ---- linear layers: `act` decides whether pre must be present; the per-embodiment ones need ids
// for every row of x, the FP8 ones in and out (W [in, out]) multiples of 16.
OpCheck check_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                             const View& y);
OpCheck check_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                              const View& dx, const View& dW, const View& db);
OpCheck check_linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                                 const View& pre, const View& y);
OpCheck check_linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                                  const View& dy, const View& dx, const View& dW, const View& db);
OpCheck check_fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                                 const View& y);
OpCheck check_fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                                  const View& dx, const View& dW, const View& db);
// ---- norms ----
OpCheck check_norm(const char* op, const View& x, const View& weight, const View& bias, const View& y,
                   const View& mean, const View& rstd);
OpCheck check_rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd);
OpCheck check_layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                                const View& rstd);
OpCheck check_layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd,
                                 const View& dy, const View& dx, const View& dweight, const View& dbias);
OpCheck check_rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                               const View& dweight);
OpCheck check_norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                                    const View& y, const View& mean, const View& rstd);
OpCheck check_norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                                     const View& rstd, const View& dy, const View& dx, const View& dscale,
                                     const View& dshift);
OpCheck check_gated_residual_forward(const View& x, const View& gate, const View& y);
OpCheck check_residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                             const View& scale, const View& shift, const View& normed,
                                             const View& y, const View& mean, const View& rstd);
OpCheck check_gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                                      const View& dgate);
// ---- attention, RoPE ----
OpCheck check_attention(const char* op, const View& q, const View& k, const View& v, const View& out,
                        const View& lse, const AttnConfig& cfg, const AttnIndex& idx);
OpCheck check_attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                 const View& dout, const View& dq, const View& dk, const View& dv,
                                 const AttnConfig& cfg, const AttnIndex& idx);
OpCheck check_rope(const char* op, const View& x, const int32_t* pos, const RopeConfig& cfg);
// ---- dropout ----
// dropout_forward (in x, out y) and dropout_backward (in dy, out dx): both present with one shape,
// p in [0, 1), the rows' keys present, and rows·cols < 2³² (an element's index within its site).
OpCheck check_dropout(const char* op, const View& in, const View& out, const DropoutConfig& cfg,
                      const DropoutRows& rows);
// ---- embeddings, flow matching, losses ----
// sinus_embedding: one timestep per row of out (t [N, 1], or [N, 2] as the sum of two), out's
// width positive and even, the frequency shift in [0, out.cols / 2).
OpCheck check_sinus_embedding(const View& t, const View& out, const SinusConfig& cfg);
OpCheck check_flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                               const RowIndex& t_rows, const View& y);
// mse_loss: row_weight, when given, fp32 [rows of pred, 1] and contiguous.
OpCheck check_mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                       const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg,
                       const View& dpred, const double* sum);
// ---- optimizer ----
OpCheck check_sum_squares(const View& g, const double* out);
OpCheck check_adamw_step(const View& param, const View& grad, const View& m, const View& v);
// ---- the frozen encoders' ops ----
// Also checks the segments (host memory) and the bias' shape against them.
OpCheck check_encoder_attention(const View& q, const View& k, const View& v, const View& bias,
                                const AttnBias& bias_kind, const View& out, const View& lse,
                                const EncoderAttnConfig& cfg, const AttnSegments& segments);
// pack_linear: W [in, out] and packed [1, ops.packed_linear_elements(in, out)], contiguous, one dtype.
OpCheck check_pack_linear(const Ops& ops, const View& W, const View& packed);
// packed_linear_forward: packed holds packed_linear_elements(x cols, y cols) of x's dtype; b, pre
// and y as linear_forward's with W [x cols, y cols].
OpCheck check_packed_linear(const Ops& ops, const View& x, const View& packed, const View& b, Activation act,
                            const View& pre, const View& y);
OpCheck check_rope_half(const char* op, const View& x, const int32_t* pos, const RopeHalfConfig& cfg);
// The forward passes y, dgate and dup absent; the backward passes dy as y.
OpCheck check_gated_activation(const char* op, Activation act, const View& gate, const View& up, const View& y,
                               const View& dgate, const View& dup);

// The video ops: x and y present, contiguous, their rows and columns those of the config; the
// config's sizes positive (and, for the convolution, padding no wider than its kernel).
OpCheck check_conv3d(const View& x, const View& weight, const View& bias, const View& y, const ConvConfig& cfg);
// pack_conv3d: weight [kt·S, Co] (kt ≥ 1 dividing its rows) and packed
// [1, ops.packed_conv3d_elements(kt, S, Co)], contiguous, one dtype.
OpCheck check_pack_conv3d(const Ops& ops, const View& weight, int kt, const View& packed);
// packed_conv3d_forward: packed holds packed_conv3d_elements(kt, kh·kw·Ci, Co) of x's dtype;
// conv3d_forward's rules for the rest, the weight the packed form stands for in its place.
OpCheck check_packed_conv3d(const Ops& ops, const View& x, const View& packed, const View& bias, const View& y,
                            const ConvConfig& cfg);
OpCheck check_pixel_unshuffle(const View& x, const View& y, const UnshuffleConfig& cfg);
OpCheck check_channel_rmsnorm(const View& x, const View& gamma, Activation act, const View& y);

}  // namespace emb
