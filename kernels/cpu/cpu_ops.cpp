#include "kernels/cpu/cpu_ops.hpp"

#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/adamw.hpp"
#include "kernels/cpu/attention.hpp"
#include "kernels/cpu/column_sum.hpp"
#include "kernels/cpu/embedding.hpp"
#include "kernels/cpu/flow_loss.hpp"
#include "kernels/cpu/fp8_linear.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/modulate.hpp"
#include "kernels/cpu/norm.hpp"
#include "kernels/cpu/rope.hpp"
#include "kernels/cpu/rows.hpp"
#include "kernels/cpu/op_entry.hpp"

namespace emb {
namespace {

// Where a linear's GEMM writes: y without an activation, else pre (activation_epilogue reads it).
float* gemm_output(Activation act, const View& pre, const View& y) { return act == Activation::none ? f(y) : f(pre); }
void activation_epilogue(Activation act, const View& pre, const View& y) {
  if (act != Activation::none) cpu::activation_forward(act, cf(pre), f(y), y.size());
}

}  // namespace

const float* CpuOps::activation_input_gradient(Activation act, const View& pre, const View& dy) {
  if (act == Activation::none) return cf(dy);
  float* dpre = scratch(dy.size());
  cpu::activation_backward(act, cf(pre), cf(dy), dpre, dy.size());
  return dpre;
}

void* CpuOps::allocate(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) & ~size_t(63));
  EMB_CHECK(p || bytes == 0, "out of memory: ", (bytes + 999999) / 1000000,
            " MB asked of the host for the model's parameters, gradients, optimizer state or activations; lower "
            "data.tokens_per_mb, set model.recompute = full or train.shard = full, or use more ranks (embtrain DECK "
            "--plan estimates the memory per rank)");
  return p;
}
void CpuOps::deallocate(void* p) { std::free(p); }
void CpuOps::upload(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuOps::download(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

float* CpuOps::scratch(int64_t n) {
  if (scratch_.size() < size_t(n)) scratch_.resize(size_t(n));
  std::memset(scratch_.data(), 0, size_t(n) * sizeof(float));
  return scratch_.data();
}

void CpuOps::zero(const View& y) {
  OpCheck c("zero", {{"y", &y}});
  c.well_formed(), fp32(c);
  if (!y.absent()) cpu::zero_rows(f(y), y.ld, y.rows, y.cols);
}

void CpuOps::copy(const View& x, const View& y) {
  fp32(check_elementwise("copy", {{"x", &x}, {"y", &y}}));
  cpu::copy_rows(cf(x), x.ld, nullptr, f(y), y.ld, nullptr, x.rows, x.cols);
}

void CpuOps::convert(const View& x, const View& y) {
  check_convert(x, y);
  const int64_t n = x.size();
  if (x.dtype == y.dtype) {
    std::memcpy(y.data, x.data, size_t(n) * dtype_size(x.dtype));
  } else if (x.dtype == DType::f32) {
    const float* src = cf(x);
    bf16* dst = static_cast<bf16*>(y.data);
    for (int64_t i = 0; i < n; ++i) dst[i] = to_bf16(src[i]);
  } else {
    const bf16* src = static_cast<const bf16*>(x.data);
    float* dst = f(y);
    for (int64_t i = 0; i < n; ++i) dst[i] = to_float(src[i]);
  }
}

void CpuOps::add(const View& a, const View& b, const View& y) {
  fp32(check_elementwise("add", {{"a", &a}, {"b", &b}, {"y", &y}}));
  cpu::add(cf(a), a.ld, cf(b), b.ld, f(y), y.ld, y.rows, y.cols);
}

void CpuOps::add_bias(const View& y, const View& b) {
  OpCheck c("add_bias", {{"y", &y}, {"b", &b}});
  c.well_formed(), fp32_contiguous(c);
  c.expect(!y.absent() && !b.absent() && b.size() == y.cols, "b must hold y cols elements");
  cpu::add_bias(f(y), cf(b), y.rows, y.cols);
}

void CpuOps::copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) {
  fp32(check_rows("copy_rows", src, src_rows, dst, dst_rows));
  const int64_t n = !src_rows.absent() ? src_rows.n : !dst_rows.absent() ? dst_rows.n : src.rows;
  cpu::copy_rows(cf(src), src.ld, src_rows.data, f(dst), dst.ld, dst_rows.data, n, src.cols);
}

void CpuOps::add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) {
  fp32(check_rows("add_rows", src, src_rows, dst, dst_rows));
  const int64_t n = !src_rows.absent() ? src_rows.n : !dst_rows.absent() ? dst_rows.n : src.rows;
  cpu::add_rows(cf(src), src.ld, src_rows.data, f(dst), dst.ld, dst_rows.data, n, src.cols);
}

void CpuOps::column_sums(const View& x, const View& out) {
  OpCheck c("column_sums", {{"x", &x}, {"out", &out}});
  c.well_formed(), fp32(c);
  c.expect(!x.absent() && !out.absent() && out.size() == x.cols && out.contiguous(), "out must be [1, x cols]");
  const float* p = cf(x);
  const int64_t ld = x.ld;
  cpu::accumulate_column_sums(x.rows, int(x.cols), f(out), [&](int64_t i, int c) { return double(p[i * ld + c]); });
}

void CpuOps::activation_forward(Activation act, const View& x, const View& y) {
  const OpCheck c = check_elementwise("activation_forward", {{"x", &x}, {"y", &y}});
  fp32_contiguous(c);
  c.expect(act != Activation::none, "no activation given");
  cpu::activation_forward(act, cf(x), f(y), x.size());
}

void CpuOps::activation_backward(Activation act, const View& x, const View& dy, const View& dx) {
  const OpCheck c = check_elementwise("activation_backward", {{"x", &x}, {"dy", &dy}, {"dx", &dx}});
  fp32_contiguous(c);
  c.expect(act != Activation::none, "no activation given");
  cpu::activation_backward(act, cf(x), cf(dy), f(dx), x.size());
}

void CpuOps::linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                            const View& y) {
  fp32_contiguous(check_linear("linear_forward", x, W, b, act, pre, y, 0));
  cpu::linear_forward(cf(x), cf(W), cf(b), gemm_output(act, pre, y), x.rows, int(x.cols), int(W.cols));
  activation_epilogue(act, pre, y);
}

void CpuOps::linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                             const View& dx, const View& dW, const View& db) {
  fp32_contiguous(check_linear_backward("linear_backward", x, W, act, pre, dy, dx, dW, db, 0));
  cpu::linear_backward(cf(x), cf(W), activation_input_gradient(act, pre, dy), f(dx), f(dW), f(db), x.rows,
                       int(x.cols), int(W.cols));
}

// The reference of the FP8 recipe (kernels/cpu/fp8_linear.hpp), W quantised per call.
void CpuOps::fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                                const View& y) {
  const OpCheck c = check_linear("fp8_linear_forward", x, W, b, act, pre, y, 0);
  fp32_contiguous(c), check_fp8_shape(c, W);
  const cpu::Fp8Weight w = cpu::quantize_fp8_weight(cf(W), W.rows, W.cols);
  cpu::fp8_linear_forward(cf(x), w, cf(b), gemm_output(act, pre, y), x.rows);
  activation_epilogue(act, pre, y);
}

void CpuOps::fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                                 const View& dx, const View& dW, const View& db) {
  const OpCheck c = check_linear_backward("fp8_linear_backward", x, W, act, pre, dy, dx, dW, db, 0);
  fp32_contiguous(c), check_fp8_shape(c, W);
  const cpu::Fp8Weight w = cpu::quantize_fp8_weight(cf(W), W.rows, W.cols);
  cpu::fp8_linear_backward(cf(x), w, activation_input_gradient(act, pre, dy), f(dx), f(dW), f(db), x.rows);
}

void CpuOps::linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                                const View& pre, const View& y) {
  const OpCheck c = check_linear("linear_emb_forward", x, W, b, act, pre, y, emb.n_emb);
  fp32_contiguous(c);
  c.expect(emb.n_emb > 0 && emb.ids && emb.n == x.rows, str("the embodiment ids must cover x's rows (", emb.n, ")"));
  cpu::linear_emb_forward(cf(x), cf(W), cf(b), emb.ids, gemm_output(act, pre, y), x.rows, int(x.cols),
                          int(W.cols), emb.n_emb);
  activation_epilogue(act, pre, y);
}

void CpuOps::linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                                 const View& dy, const View& dx, const View& dW, const View& db) {
  const OpCheck c = check_linear_backward("linear_emb_backward", x, W, act, pre, dy, dx, dW, db, emb.n_emb);
  fp32_contiguous(c);
  c.expect(emb.n_emb > 0 && emb.ids && emb.n == x.rows, str("the embodiment ids must cover x's rows (", emb.n, ")"));
  cpu::linear_emb_backward(cf(x), cf(W), emb.ids, activation_input_gradient(act, pre, dy), f(dx), f(dW), f(db),
                           x.rows, int(x.cols), int(W.cols), emb.n_emb);
}

void CpuOps::layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                               const View& rstd, float eps) {
  const OpCheck c = check_norm("layernorm_forward", x, weight, bias, y, mean, rstd);
  fp32_contiguous(c);
  c.expect(!mean.absent(), "mean must be present");
  c.expect(eps > 0, str("eps must be positive, not ", eps));
  cpu::layernorm_forward(cf(x), cf(weight), cf(bias), f(y), f(mean), f(rstd), x.rows, int(x.cols), eps);
}

void CpuOps::layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd,
                                const View& dy, const View& dx, const View& dweight, const View& dbias) {
  const OpCheck c = check_norm("layernorm_backward", x, weight, dbias, dy, mean, rstd);
  fp32_contiguous(c);
  c.expect(!mean.absent(), "mean must be present");
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols && dx.contiguous()), "dx must have x's shape");
  c.expect(dweight.absent() || dweight.size() == x.cols, "dweight must hold x cols elements");
  cpu::layernorm_backward(cf(x), cf(weight), cf(mean), cf(rstd), cf(dy), f(dx), f(dweight), f(dbias), x.rows,
                          int(x.cols));
}

void CpuOps::rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) {
  fp32_contiguous(check_norm("rmsnorm_forward", x, weight, View{}, y, View{}, rstd));
  cpu::rmsnorm_forward(cf(x), cf(weight), f(y), f(rstd), x.rows, int(x.cols));
}

void CpuOps::rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                              const View& dweight) {
  const OpCheck c = check_norm("rmsnorm_backward", x, weight, dweight, dy, View{}, rstd);
  fp32_contiguous(c);
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols && dx.contiguous()), "dx must have x's shape");
  cpu::rmsnorm_backward(cf(x), cf(weight), cf(rstd), cf(dy), f(dx), f(dweight), x.rows, int(x.cols));
}

void CpuOps::norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                                   const View& y, const View& mean, const View& rstd) {
  const OpCheck c = check_norm_modulate_forward(x, scale, shift, normed, y, mean, rstd);
  fp32(c);
  c.expect(x.contiguous() && normed.contiguous() && y.contiguous(), "x, normed and y must be contiguous");
  cpu::layernorm_forward(cf(x), nullptr, nullptr, f(normed), f(mean), f(rstd), x.rows, int(x.cols));
  cpu::modulate_forward(cf(normed), cf(scale), cf(shift), scale.ld, f(y), x.rows, int(x.cols));
}

void CpuOps::norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                                    const View& rstd, const View& dy, const View& dx, const View& dscale,
                                    const View& dshift) {
  const OpCheck c = check_norm_modulate_backward(x, normed, scale, mean, rstd, dy, dx, dscale, dshift);
  fp32(c);
  c.expect(x.contiguous() && normed.contiguous() && dy.contiguous() && (dx.absent() || dx.contiguous()),
           "x, normed, dy and dx must be contiguous");
  float* dn = scratch(x.size());
  cpu::modulate_backward(cf(normed), cf(scale), scale.ld, cf(dy), dn, f(dscale), f(dshift), x.rows, int(x.cols));
  cpu::layernorm_backward(cf(x), nullptr, cf(mean), cf(rstd), dn, f(dx), nullptr, nullptr, x.rows, int(x.cols));
}

void CpuOps::gated_residual_forward(const View& x, const View& gate, const View& y) {
  const OpCheck c = check_gated_residual_forward(x, gate, y);
  fp32(c);
  c.expect(x.contiguous() && y.contiguous(), "x and y must be contiguous");
  cpu::gated_residual_forward(f(x), cf(gate), gate.ld, cf(y), x.rows, int(x.cols));
}

// No fused loop: the reference is the three ops the fusion replaces, in their order.
void CpuOps::residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                            const View& scale, const View& shift, const View& normed, const View& y,
                                            const View& mean, const View& rstd) {
  fp32(check_residual_norm_modulate_forward(x, gate, r, x_in, scale, shift, normed, y, mean, rstd));
  CpuOps::gated_residual_forward(x, gate, r);
  if (!x_in.absent()) CpuOps::copy(x, x_in);
  CpuOps::norm_modulate_forward(x, scale, shift, normed, y, mean, rstd);
}

void CpuOps::gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                                     const View& dgate) {
  OpCheck c("gated_residual_backward", {{"gate", &gate}, {"y", &y}, {"dx", &dx}, {"dy", &dy}, {"dgate", &dgate}});
  c.well_formed(), fp32(c);
  c.expect(!y.absent() && !dx.absent(), "y and dx must be present");
  c.same_shape(y, dx, "y", "dx");
  c.expect(dy.absent() || (dy.rows == y.rows && dy.cols == y.cols && dy.contiguous()), "dy must have y's shape");
  c.expect(gate.absent() || (gate.rows == y.rows && gate.cols == y.cols), "gate must have y's shape");
  c.expect(dgate.absent() || (!gate.absent() && dgate.rows == y.rows && dgate.cols == y.cols && dgate.ld == gate.ld),
           "dgate must have gate's shape and row stride");
  c.expect(y.contiguous() && dx.contiguous(), "y and dx must be contiguous");
  cpu::gated_residual_backward(cf(gate), gate.ld, cf(y), cf(dx), f(dy), f(dgate), y.rows, int(y.cols));
}

void CpuOps::attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                               const AttnConfig& cfg, const AttnIndex& idx) {
  fp32_contiguous(check_attention("attention_forward", q, k, v, out, lse, cfg, idx));
  cpu::attention_forward(cf(q), cf(k), cf(v), f(out), f(lse), q.rows, k.rows, cfg.heads, cfg.head_dim, idx);
}

void CpuOps::attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                const View& dout, const View& dq, const View& dk, const View& dv,
                                const AttnConfig& cfg, const AttnIndex& idx) {
  const OpCheck c = check_attention("attention_backward", q, k, v, out, lse, cfg, idx);
  OpCheck g("attention_backward", {{"q", &q}, {"k", &k}, {"dout", &dout}, {"dq", &dq}, {"dk", &dk}, {"dv", &dv}});
  fp32_contiguous(c), g.well_formed(), fp32_contiguous(g);
  g.expect(!dout.absent() && !dq.absent() && !dk.absent() && !dv.absent(), "dout, dq, dk and dv must be present");
  g.same_shape(q, dout, "q", "dout"), g.same_shape(q, dq, "q", "dq");
  g.same_shape(k, dk, "k", "dk"), g.same_shape(k, dv, "k", "dv");
  cpu::attention_backward(cf(q), cf(k), cf(v), cf(out), cf(lse), cf(dout), f(dq), f(dk), f(dv), q.rows, k.rows,
                          cfg.heads, cfg.head_dim, idx);
}

namespace {
void check_rope(const char* op, const View& x, const int32_t* pos, const RopeConfig& cfg) {
  OpCheck c(op, {{"x", &x}});
  c.well_formed(), fp32_contiguous(c);
  c.expect(!x.absent() && pos, "x and pos must be present");
  c.expect(cfg.heads > 0 && cfg.head_dim > 0 && cfg.head_dim % 2 == 0 && x.cols == int64_t(cfg.heads) * cfg.head_dim,
           str("x must be [T, heads·head_dim] with heads ", cfg.heads, " and an even head_dim ", cfg.head_dim));
  c.expect(cfg.mode != RopeMode::d3 || cfg.head_dim / 2 >= 3,
           str("3d RoPE needs head_dim >= 6, not ", cfg.head_dim));
}
}  // namespace

void CpuOps::rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) {
  check_rope("rope_forward", x, pos, cfg);
  cpu::rope_forward(f(x), pos, x.rows, cfg.heads, cfg.head_dim, cfg.mode);
}

void CpuOps::rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) {
  check_rope("rope_backward", dx, pos, cfg);
  cpu::rope_backward(f(dx), pos, dx.rows, cfg.heads, cfg.head_dim, cfg.mode);
}

void CpuOps::sinus_embedding(const View& t, const View& out) {
  OpCheck c("sinus_embedding", {{"t", &t}, {"out", &out}});
  c.well_formed(), fp32_contiguous(c);
  c.expect(!t.absent() && !out.absent() && t.size() == out.rows, "t must hold one timestep per row of out");
  c.expect(out.cols > 0 && out.cols % 2 == 0, "out's width must be positive and even");
  cpu::sinus_embedding(cf(t), f(out), out.rows, int(out.cols));
}

void CpuOps::flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                              const RowIndex& t_rows, const View& y) {
  OpCheck c("flow_interpolate", {{"u", &u}, {"w", &w}, {"t", &t}, {"y", &y}});
  c.well_formed(), fp32_contiguous(c);
  c.expect(!u.absent() && !w.absent() && !t.absent() && !y.absent(), "every view must be present");
  c.same_shape(u, w, "u", "w");
  c.expect(u.cols == y.cols, "u and y differ in columns");
  c.expect(src_rows.absent() ? u.rows >= y.rows : src_rows.n == y.rows, "src_rows must give one row of u per row of y");
  c.expect(t.cols == 1 && (t_rows.absent() ? t.rows >= y.rows : t_rows.n == y.rows), "t must be [M, 1] with t_rows per row of y");
  cpu::flow_interpolate(cf(u), cf(w), src_rows.data, cf(t), t_rows.data, f(y), y.rows, y.cols);
}

void CpuOps::mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                      const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg,
                      const View& dpred, double* sum) {
  OpCheck c("mse_loss", {{"pred", &pred}, {"plus", &plus}, {"minus", &minus}, {"mask", &mask}, {"dpred", &dpred}});
  c.well_formed(), fp32_contiguous(c);
  c.expect(!pred.absent() && !plus.absent() && !minus.absent() && sum, "pred, plus, minus and sum must be present");
  c.same_shape(plus, minus, "plus", "minus");
  c.expect(mask.absent() || (mask.rows == plus.rows && mask.cols == plus.cols), "mask must have the targets' shape");
  c.expect(dpred.absent() || (dpred.rows == pred.rows && dpred.cols == pred.cols), "dpred must have pred's shape");
  c.expect(target_rows.absent() ? plus.rows >= pred.rows : target_rows.n == pred.rows,
           "target_rows must give one target row per row of pred");
  c.expect(target_cols.absent() ? plus.cols == pred.cols : target_cols.n == pred.cols,
           "target_cols must give one target column per column of pred");
  c.expect(pred.rows == 0 || cfg.denominator > 0, str("the denominator is ", cfg.denominator));
  *sum = cpu::mse_loss(cf(pred), cf(plus), cf(minus), cf(mask), target_rows.data, target_cols.data, plus.cols,
                       cfg.denominator, cfg.weight, f(dpred), pred.rows, pred.cols);
}

void CpuOps::sum_squares(const View& g, double* out) {
  OpCheck c("sum_squares", {{"g", &g}});
  c.well_formed(), fp32_contiguous(c);
  c.expect(out != nullptr, "out must be present");
  *out = cpu::sum_squares(cf(g), g.size());
}

void CpuOps::adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                        int64_t step, float grad_scale, float decay_mult) {
  fp32_contiguous(check_elementwise("adamw_step", {{"param", &param}, {"grad", &grad}, {"m", &m}, {"v", &v}}));
  cpu::adamw_step(f(param), cf(grad), f(m), f(v), param.size(), cfg, step, grad_scale, decay_mult);
}

}  // namespace emb
