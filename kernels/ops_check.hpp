// The shape rules of kernels/ops.hpp, shared by every backend so a bad call is the same error
// on all of them: one line "op: what; x [N, in], W [in, out], ..." (emb::Error). A backend calls
// the rule of an op first, then checks the dtypes it supports with OpCheck::dtypes.
#pragma once
#include <initializer_list>
#include <string>
#include <utility>

#include "kernels/ops.hpp"

namespace emb {

class OpCheck {
 public:
  using Named = std::pair<const char*, const View*>;
  OpCheck(const char* op, std::initializer_list<Named> views);

  // Throws "op: what; name [shape], ..." unless ok.
  void expect(bool ok, const std::string& what) const;
  // Every present view has cols ≤ ld and a non-negative size.
  void well_formed() const;
  // Every present view is contiguous (ld = cols).
  void contiguous() const;
  // Every present view has one of the dtypes (the backend's supported set).
  void dtypes(std::initializer_list<DType> supported) const;
  // Views a and b (both present) have the same rows and cols.
  void same_shape(const View& a, const View& b, const char* a_name, const char* b_name) const;

 private:
  std::string op_;
  std::vector<Named> views_;
};

// The rules of each op (the names are the op's). `act` decides whether pre must be present.
OpCheck check_elementwise(const char* op, std::initializer_list<OpCheck::Named> views);
// convert: x and y the same shape, contiguous, each fp32 or bf16.
OpCheck check_convert(const View& x, const View& y);
OpCheck check_rows(const char* op, const View& src, const RowIndex& src_rows, const View& dst,
                   const RowIndex& dst_rows);
OpCheck check_linear(const char* op, const View& x, const View& W, const View& b, Activation act, const View& pre,
                     const View& y, int n_emb);
OpCheck check_linear_backward(const char* op, const View& x, const View& W, Activation act, const View& pre,
                              const View& dy, const View& dx, const View& dW, const View& db, int n_emb);
// The FP8 linears' extra rule: in and out (W [in, out]) multiples of 16.
void check_fp8_shape(const OpCheck& c, const View& W);
OpCheck check_norm(const char* op, const View& x, const View& weight, const View& bias, const View& y,
                   const View& mean, const View& rstd);
OpCheck check_norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                                    const View& y, const View& mean, const View& rstd);
OpCheck check_gated_residual_forward(const View& x, const View& gate, const View& y);
OpCheck check_residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                             const View& scale, const View& shift, const View& normed,
                                             const View& y, const View& mean, const View& rstd);
OpCheck check_norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                                     const View& rstd, const View& dy, const View& dx, const View& dscale,
                                     const View& dshift);
OpCheck check_attention(const char* op, const View& q, const View& k, const View& v, const View& out,
                        const View& lse, const AttnConfig& cfg, const AttnIndex& idx);
// Also checks the segments (host memory) and the bias' shape against them.
OpCheck check_encoder_attention(const View& q, const View& k, const View& v, const View& bias,
                                const AttnBias& bias_kind, const View& out, const View& lse,
                                const EncoderAttnConfig& cfg, const AttnSegments& segments);
OpCheck check_rope_half(const char* op, const View& x, const int32_t* pos, const RopeHalfConfig& cfg);
// The forward passes y, dgate and dup absent; the backward passes dy as y.
OpCheck check_gated_activation(const char* op, Activation act, const View& gate, const View& up, const View& y,
                               const View& dgate, const View& dup);

// The video ops: x and y present, contiguous, their rows and columns those of the config; the
// config's sizes positive (and, for the convolution, padding no wider than its kernel).
OpCheck check_conv3d(const View& x, const View& weight, const View& bias, const View& y, const ConvConfig& cfg);
OpCheck check_pixel_unshuffle(const View& x, const View& y, const UnshuffleConfig& cfg);
OpCheck check_resize(const View& x, const View& y, const ResizeConfig& cfg);
OpCheck check_channel_rmsnorm(const View& x, const View& gamma, Activation act, const View& y);

}  // namespace emb
