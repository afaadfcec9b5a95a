#include "kernels/ops_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "kernels/dropout_keep.hpp"

namespace emb {
namespace {
// An absent view that outlives every OpCheck naming it (a temporary View{} would not).
const View kAbsent;
}  // namespace

OpCheck::OpCheck(const char* op, std::initializer_list<Named> views) : op_(op), n_views_(views.size()) {
  EMB_ASSERT(views.size() <= kMaxViews);
  std::copy(views.begin(), views.end(), views_.begin());
}

void OpCheck::fail(const std::string& what) const {
  std::string shapes;
  for (const Named& v : *this) shapes += str(shapes.empty() ? "" : ", ", v.first, " ", v.second->shape());
  throw Error(str(op_, ": ", what, "; ", shapes));
}

void OpCheck::well_formed() const {
  for (const Named& v : *this)
    if (!v.second->absent())
      expect(v.second->rows >= 0 && v.second->cols >= 0 && v.second->ld >= v.second->cols,
             v.first, " is not a matrix (rows, cols >= 0 and ld >= cols)");
}

void OpCheck::contiguous() const {
  for (const Named& v : *this)
    if (!v.second->absent()) expect(v.second->contiguous(), v.first, " must be contiguous on this backend");
}

void OpCheck::contiguous(std::initializer_list<Named> views) const {
  for (const Named& v : views)
    if (!v.second->absent()) expect(v.second->contiguous(), v.first, " must be contiguous on this backend");
}

void OpCheck::dtypes(std::initializer_list<DType> supported) const {
  for (const Named& v : *this) {
    if (v.second->absent()) continue;
    bool ok = false;
    for (DType t : supported) ok = ok || v.second->dtype == t;
    expect(ok, v.first, " has dtype ", dtype_name(v.second->dtype), ", unsupported on this backend");
  }
}

void OpCheck::same_shape(const View& a, const View& b, const char* a_name, const char* b_name) const {
  expect(a.rows == b.rows && a.cols == b.cols, a_name, " and ", b_name, " differ in shape");
}

OpCheck check_zero(const View& y) {
  OpCheck c("zero", {{"y", &y}});
  c.well_formed();
  return c;
}

OpCheck check_elementwise(const char* op, std::initializer_list<OpCheck::Named> views) {
  OpCheck c(op, views);
  c.well_formed();
  const View* first = nullptr;
  for (const OpCheck::Named& v : views) {
    c.expect(!v.second->absent(), v.first, " is absent");
    if (!first) first = v.second;
    c.expect(v.second->rows == first->rows && v.second->cols == first->cols, "shapes differ");
  }
  return c;
}

OpCheck check_convert(const View& x, const View& y) {
  OpCheck c = check_elementwise("convert", {{"x", &x}, {"y", &y}});
  c.contiguous();
  c.dtypes({DType::f32, DType::bf16});
  return c;
}

OpCheck check_add_bias(const View& y, const View& b) {
  OpCheck c("add_bias", {{"y", &y}, {"b", &b}});
  c.well_formed();
  c.expect(!y.absent() && !b.absent() && b.size() == y.cols, "b must hold y cols elements");
  c.expect(b.contiguous(), "b must be contiguous");
  return c;
}

int64_t row_count(const View& src, const RowIndex& src_rows, const RowIndex& dst_rows) {
  return !src_rows.absent() ? src_rows.n : !dst_rows.absent() ? dst_rows.n : src.rows;
}

OpCheck check_rows(const char* op, const View& src, const RowIndex& src_rows, const View& dst,
                   const RowIndex& dst_rows) {
  OpCheck c(op, {{"src", &src}, {"dst", &dst}});
  c.well_formed();
  c.expect(!src.absent() && !dst.absent(), "src and dst must be present");
  c.expect(src.cols == dst.cols, "src and dst differ in columns");
  const int64_t n = row_count(src, src_rows, dst_rows);
  c.expect(src_rows.absent() || src_rows.n == n, "src_rows has ", src_rows.n, " rows, dst_rows ", dst_rows.n);
  c.expect(dst_rows.absent() || dst_rows.n == n, "src_rows has ", src_rows.n, " rows, dst_rows ", dst_rows.n);
  c.expect(!src_rows.absent() || n <= src.rows, n, " rows from src");
  c.expect(!dst_rows.absent() || n <= dst.rows, n, " rows into dst");
  return c;
}

OpCheck check_column_sums(const View& x, const View& out) {
  OpCheck c("column_sums", {{"x", &x}, {"out", &out}});
  c.well_formed();
  c.expect(!x.absent() && !out.absent() && out.size() == x.cols && out.contiguous(), "out must be [1, x cols]");
  return c;
}

OpCheck check_activation(const char* op, Activation act, std::initializer_list<OpCheck::Named> views) {
  OpCheck c = check_elementwise(op, views);
  c.expect(act != Activation::none, "no activation given");
  return c;
}

namespace {

// The rules of one linear family (n_emb 0: one W; > 0: per-embodiment).
OpCheck linear_forward_rules(const char* op, const View& x, const View& W, const View& b, Activation act,
                             const View& pre, const View& y, int n_emb) {
  OpCheck c(op, {{"x", &x}, {"W", &W}, {"b", &b}, {"pre", &pre}, {"y", &y}});
  c.well_formed();
  c.expect(!x.absent() && !W.absent() && !y.absent(), "x, W and y must be present");
  const int64_t E = n_emb > 0 ? n_emb : 1;
  if (W.rows != E * x.cols) c.fail(n_emb > 0 ? str("W must be [E·in, out] with E = ", n_emb) : "W must be [in, out]");
  c.expect(y.rows == x.rows && y.cols == W.cols, "y must be [x rows, W cols]");
  c.expect(b.absent() || (b.rows == E && b.cols == W.cols), "b must be [E, out]");
  c.expect((act == Activation::none) == pre.absent(), "pre is present exactly when there is an activation");
  c.expect(pre.absent() || (pre.rows == y.rows && pre.cols == y.cols), "pre must have y's shape");
  return c;
}

OpCheck linear_backward_rules(const char* op, const View& x, const View& W, Activation act, const View& pre,
                              const View& dy, const View& dx, const View& dW, const View& db, int n_emb) {
  OpCheck c(op, {{"x", &x}, {"W", &W}, {"pre", &pre}, {"dy", &dy}, {"dx", &dx}, {"dW", &dW}, {"db", &db}});
  c.well_formed();
  c.expect(!x.absent() && !W.absent() && !dy.absent(), "x, W and dy must be present");
  const int64_t E = n_emb > 0 ? n_emb : 1;
  if (W.rows != E * x.cols) c.fail(n_emb > 0 ? str("W must be [E·in, out] with E = ", n_emb) : "W must be [in, out]");
  c.expect(dy.rows == x.rows && dy.cols == W.cols, "dy must be [x rows, W cols]");
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols), "dx must have x's shape");
  c.expect(dW.absent() || (dW.rows == W.rows && dW.cols == W.cols), "dW must have W's shape");
  c.expect(db.absent() || (db.rows == E && db.cols == W.cols), "db must be [E, out]");
  c.expect((act == Activation::none) == pre.absent(), "pre is present exactly when there is an activation");
  c.expect(pre.absent() || (pre.rows == dy.rows && pre.cols == dy.cols), "pre must have dy's shape");
  return c;
}

void emb_rows_rule(const OpCheck& c, const EmbRows& emb, const View& x) {
  c.expect(emb.n_emb > 0 && emb.ids && emb.n == x.rows, "the embodiment ids must cover x's rows (", emb.n, ")");
}

void fp8_shape_rule(const OpCheck& c, const View& W) {
  c.expect(W.rows % 16 == 0 && W.cols % 16 == 0, "the FP8 GEMM needs in and out multiples of 16");
}

}  // namespace

OpCheck check_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                             const View& y) {
  return linear_forward_rules("linear_forward", x, W, b, act, pre, y, 0);
}

OpCheck check_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                              const View& dx, const View& dW, const View& db) {
  return linear_backward_rules("linear_backward", x, W, act, pre, dy, dx, dW, db, 0);
}

OpCheck check_linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                                 const View& pre, const View& y) {
  const OpCheck c = linear_forward_rules("linear_emb_forward", x, W, b, act, pre, y, emb.n_emb);
  emb_rows_rule(c, emb, x);
  return c;
}

OpCheck check_linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                                  const View& dy, const View& dx, const View& dW, const View& db) {
  const OpCheck c = linear_backward_rules("linear_emb_backward", x, W, act, pre, dy, dx, dW, db, emb.n_emb);
  emb_rows_rule(c, emb, x);
  return c;
}

OpCheck check_fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                                 const View& y) {
  const OpCheck c = linear_forward_rules("fp8_linear_forward", x, W, b, act, pre, y, 0);
  fp8_shape_rule(c, W);
  return c;
}

OpCheck check_fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                                  const View& dx, const View& dW, const View& db) {
  const OpCheck c = linear_backward_rules("fp8_linear_backward", x, W, act, pre, dy, dx, dW, db, 0);
  fp8_shape_rule(c, W);
  return c;
}

OpCheck check_norm(const char* op, const View& x, const View& weight, const View& bias, const View& y,
                   const View& mean, const View& rstd) {
  OpCheck c(op, {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &y}, {"mean", &mean}, {"rstd", &rstd}});
  c.well_formed();
  c.expect(!x.absent() && !y.absent() && !rstd.absent(), "x, y and rstd must be present");
  c.same_shape(x, y, "x", "y");
  c.expect(weight.absent() || weight.size() == x.cols, "weight must hold x cols elements");
  c.expect(bias.absent() || bias.size() == x.cols, "bias must hold x cols elements");
  c.expect(rstd.size() == x.rows && (mean.absent() || mean.size() == x.rows), "mean and rstd must hold x rows");
  return c;
}

OpCheck check_rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) {
  return check_norm("rmsnorm_forward", x, weight, kAbsent, y, kAbsent, rstd);
}

OpCheck check_layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                                const View& rstd) {
  const OpCheck c = check_norm("layernorm_forward", x, weight, bias, y, mean, rstd);
  c.expect(!mean.absent(), "mean must be present");
  return c;
}

// The norm backwards' statistics and gradients are checked on the forward's rule, with the
// gradient of the output in y's place and that of the last parameter in its place.
OpCheck check_layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd,
                                 const View& dy, const View& dx, const View& dweight, const View& dbias) {
  const OpCheck c = check_norm("layernorm_backward", x, weight, dbias, dy, mean, rstd);
  c.expect(!mean.absent(), "mean must be present");
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols), "dx must have x's shape");
  c.expect(dweight.absent() || dweight.size() == x.cols, "dweight must hold x cols elements");
  return c;
}

OpCheck check_rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                               const View& dweight) {
  const OpCheck c = check_norm("rmsnorm_backward", x, weight, dweight, dy, kAbsent, rstd);
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols), "dx must have x's shape");
  return c;
}

namespace {

// The rules an op shares with its fused form, on that op's OpCheck (which names the views).
void gated_residual_rules(const OpCheck& c, const View& x, const View& gate, const View& y, const char* y_name) {
  c.expect(!x.absent() && !y.absent(), "x and ", y_name, " must be present");
  c.same_shape(x, y, "x", y_name);
  c.expect(gate.absent() || (gate.rows == x.rows && gate.cols == x.cols), "gate must have x's shape");
}

void norm_modulate_rules(const char* op, const OpCheck& c, const View& x, const View& scale, const View& shift,
                         const View& normed, const View& y, const View& mean, const View& rstd) {
  check_norm(op, x, kAbsent, kAbsent, normed, mean, rstd);
  c.expect(!y.absent() && !scale.absent() && !shift.absent() && !mean.absent(), "every view must be present");
  c.same_shape(x, y, "x", "y"), c.same_shape(x, scale, "x", "scale"), c.same_shape(x, shift, "x", "shift");
  c.expect(scale.ld == shift.ld, "scale and shift must share a row stride");
}

}  // namespace

OpCheck check_norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                                    const View& y, const View& mean, const View& rstd) {
  OpCheck c("norm_modulate_forward", {{"x", &x},
                                      {"scale", &scale},
                                      {"shift", &shift},
                                      {"normed", &normed},
                                      {"y", &y},
                                      {"mean", &mean},
                                      {"rstd", &rstd}});
  c.well_formed();
  norm_modulate_rules("norm_modulate_forward", c, x, scale, shift, normed, y, mean, rstd);
  return c;
}

OpCheck check_gated_residual_forward(const View& x, const View& gate, const View& y) {
  OpCheck c("gated_residual_forward", {{"x", &x}, {"gate", &gate}, {"y", &y}});
  c.well_formed();
  gated_residual_rules(c, x, gate, y, "y");
  return c;
}

OpCheck check_residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                             const View& scale, const View& shift, const View& normed,
                                             const View& y, const View& mean, const View& rstd) {
  const char* op = "residual_norm_modulate_forward";
  OpCheck c(op, {{"x", &x},
                 {"gate", &gate},
                 {"r", &r},
                 {"x_in", &x_in},
                 {"scale", &scale},
                 {"shift", &shift},
                 {"normed", &normed},
                 {"y", &y},
                 {"mean", &mean},
                 {"rstd", &rstd}});
  c.well_formed();
  gated_residual_rules(c, x, gate, r, "r");
  c.expect(x_in.absent() || (x_in.rows == x.rows && x_in.cols == x.cols), "x_in must have x's shape");
  norm_modulate_rules(op, c, x, scale, shift, normed, y, mean, rstd);
  return c;
}

OpCheck check_norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                                     const View& rstd, const View& dy, const View& dx, const View& dscale,
                                     const View& dshift) {
  OpCheck c("norm_modulate_backward", {{"x", &x},
                                       {"normed", &normed},
                                       {"scale", &scale},
                                       {"mean", &mean},
                                       {"rstd", &rstd},
                                       {"dy", &dy},
                                       {"dx", &dx},
                                       {"dscale", &dscale},
                                       {"dshift", &dshift}});
  c.well_formed();
  check_norm("norm_modulate_backward", x, kAbsent, kAbsent, normed, mean, rstd);
  c.expect(!scale.absent() && !dy.absent() && !mean.absent(), "scale, dy and mean must be present");
  c.same_shape(x, scale, "x", "scale"), c.same_shape(x, dy, "x", "dy");
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols), "dx must have x's shape");
  c.expect(dscale.absent() || (dscale.rows == x.rows && dscale.cols == x.cols && dscale.ld == scale.ld),
           "dscale must have scale's shape and row stride");
  c.expect(dshift.absent() || (dshift.rows == x.rows && dshift.cols == x.cols && dshift.ld == scale.ld),
           "dshift must have scale's shape and row stride");
  return c;
}

OpCheck check_gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                                      const View& dgate) {
  OpCheck c("gated_residual_backward", {{"gate", &gate}, {"y", &y}, {"dx", &dx}, {"dy", &dy}, {"dgate", &dgate}});
  c.well_formed();
  c.expect(!y.absent() && !dx.absent(), "y and dx must be present");
  c.same_shape(y, dx, "y", "dx");
  c.expect(dy.absent() || (dy.rows == y.rows && dy.cols == y.cols), "dy must have y's shape");
  c.expect(gate.absent() || (gate.rows == y.rows && gate.cols == y.cols), "gate must have y's shape");
  c.expect(dgate.absent() || (!gate.absent() && dgate.rows == y.rows && dgate.cols == y.cols && dgate.ld == gate.ld),
           "dgate must have gate's shape and row stride");
  return c;
}

namespace {
void attention_rules(const OpCheck& c, const View& q, const View& k, const View& v, const View& out, const View& lse,
                     const AttnConfig& cfg, const AttnIndex& idx) {
  c.well_formed();
  c.expect(!q.absent() && !k.absent() && !v.absent() && !out.absent() && !lse.absent(),
           "q, k, v, out and lse must be present");
  c.expect(cfg.heads > 0 && cfg.head_dim > 0 && q.cols == int64_t(cfg.heads) * cfg.head_dim,
           "q must be [Tq, heads·head_dim] with heads ", cfg.heads, ", head_dim ", cfg.head_dim);
  c.same_shape(k, v, "k", "v");
  c.expect(k.cols == q.cols, "k must have q's columns");
  c.same_shape(q, out, "q", "out");
  c.expect(lse.rows == q.rows && lse.cols == cfg.heads, "lse must be [Tq, heads]");
  c.expect(idx.q_seq && idx.k_seq, "the index has no seq arrays");
  const bool reads_blk = idx.mask == AttnMask::block_causal || idx.mask == AttnMask::teacher_forcing;
  c.expect((!reads_blk || (idx.q_blk && idx.k_blk && idx.q_grp && idx.k_grp)) &&
               (idx.mask != AttnMask::prefix || (idx.q_grp && idx.k_grp)),
           "the index lacks the blk/grp arrays of its mask");
  c.expect(idx.mask != AttnMask::teacher_forcing || (idx.tf.frames_per_block >= 1 && idx.tf.window >= 1),
           "teacher_forcing needs frames_per_block >= 1 and window >= 1, not ", idx.tf.frames_per_block, " and ",
               idx.tf.window);
}
}  // namespace

OpCheck check_attention(const char* op, const View& q, const View& k, const View& v, const View& out,
                        const View& lse, const AttnConfig& cfg, const AttnIndex& idx) {
  OpCheck c(op, {{"q", &q}, {"k", &k}, {"v", &v}, {"out", &out}, {"lse", &lse}});
  attention_rules(c, q, k, v, out, lse, cfg, idx);
  return c;
}

OpCheck check_attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                 const View& dout, const View& dq, const View& dk, const View& dv,
                                 const AttnConfig& cfg, const AttnIndex& idx) {
  OpCheck c("attention_backward", {{"q", &q},
                                   {"k", &k},
                                   {"v", &v},
                                   {"out", &out},
                                   {"lse", &lse},
                                   {"dout", &dout},
                                   {"dq", &dq},
                                   {"dk", &dk},
                                   {"dv", &dv}});
  attention_rules(c, q, k, v, out, lse, cfg, idx);
  c.expect(!dout.absent() && !dq.absent() && !dk.absent() && !dv.absent(), "dout, dq, dk and dv must be present");
  c.same_shape(q, dout, "q", "dout"), c.same_shape(q, dq, "q", "dq");
  c.same_shape(k, dk, "k", "dk"), c.same_shape(k, dv, "k", "dv");
  return c;
}

OpCheck check_rope(const char* op, const View& x, const int32_t* pos, const RopeConfig& cfg) {
  OpCheck c(op, {{"x", &x}});
  c.well_formed();
  c.expect(!x.absent() && pos, "x and pos must be present");
  c.expect(cfg.heads > 0 && cfg.head_dim > 0 && cfg.head_dim % 2 == 0 && x.cols == int64_t(cfg.heads) * cfg.head_dim,
           "x must be [T, heads·head_dim] with heads ", cfg.heads, " and an even head_dim ", cfg.head_dim);
  c.expect((cfg.mode != RopeMode::d3 && !cfg.token_modes) || cfg.head_dim / 2 >= 3,
           "3d RoPE needs head_dim >= 6, not ", cfg.head_dim);
  return c;
}

OpCheck check_dropout(const char* op, const View& in, const View& out, const DropoutConfig& cfg,
                      const DropoutRows& rows) {
  const bool forward = std::strcmp(op, "dropout_forward") == 0;
  OpCheck c(op, {{forward ? "x" : "dy", &in}, {forward ? "y" : "dx", &out}});
  c.well_formed();
  c.expect(!in.absent() && !out.absent(), "both views must be present");
  c.same_shape(in, out, forward ? "x" : "dy", forward ? "y" : "dx");
  c.expect(cfg.p >= 0 && cfg.p < 1, "the drop probability ", cfg.p, " must lie in [0, 1)");
  c.expect(rows.seq && rows.token && rows.sample_id, "the rows' seq, token and sample_id must be present");
  c.expect(uint64_t(in.rows) * uint64_t(in.cols) < kDropoutElements,
           "a site holds at most 2^32 elements per sample (tokens x columns)");
  return c;
}

OpCheck check_sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) {
  OpCheck c("sinus_embedding", {{"t", &t}, {"out", &out}});
  c.well_formed();
  c.expect(!t.absent() && !out.absent() && t.rows == out.rows && (t.cols == 1 || t.cols == 2),
           "t must be [out.rows, 1] or [out.rows, 2] (one timestep, or its two-float sum, per row of out)");
  c.expect(out.cols > 0 && out.cols % 2 == 0, "out's width must be positive and even");
  c.expect(cfg.freq_shift >= 0 && cfg.freq_shift < out.cols / 2,
           "the frequency shift ", cfg.freq_shift, " must lie in [0, out's width / 2)");
  return c;
}

OpCheck check_flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                               const RowIndex& t_rows, const View& y) {
  OpCheck c("flow_interpolate", {{"u", &u}, {"w", &w}, {"t", &t}, {"y", &y}});
  c.well_formed();
  c.expect(!u.absent() && !w.absent() && !t.absent() && !y.absent(), "every view must be present");
  c.same_shape(u, w, "u", "w");
  c.expect(u.cols == y.cols, "u and y differ in columns");
  c.expect(src_rows.absent() ? u.rows >= y.rows : src_rows.n == y.rows, "src_rows must give one row of u per row of y");
  c.expect(t.cols == 1 && (t_rows.absent() ? t.rows >= y.rows : t_rows.n == y.rows),
           "t must be [M, 1] with t_rows per row of y");
  return c;
}

OpCheck check_mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                       const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg,
                       const View& dpred, const double* sum) {
  OpCheck c("mse_loss", {{"pred", &pred}, {"plus", &plus}, {"minus", &minus}, {"mask", &mask}, {"dpred", &dpred}});
  c.well_formed();
  c.expect(!pred.absent() && !plus.absent() && !minus.absent() && sum, "pred, plus, minus and sum must be present");
  c.same_shape(plus, minus, "plus", "minus");
  c.expect(mask.absent() || (mask.rows == plus.rows && mask.cols == plus.cols), "mask must have the targets' shape");
  c.expect(dpred.absent() || (dpred.rows == pred.rows && dpred.cols == pred.cols), "dpred must have pred's shape");
  c.expect(target_rows.absent() ? plus.rows >= pred.rows : target_rows.n == pred.rows,
           "target_rows must give one target row per row of pred");
  c.expect(target_cols.absent() ? plus.cols == pred.cols : target_cols.n == pred.cols,
           "target_cols must give one target column per column of pred");
  c.expect(pred.rows == 0 || cfg.denominator > 0, "the denominator is ", cfg.denominator);
  c.expect(cfg.row_weight.absent() || (cfg.row_weight.dtype == DType::f32 && cfg.row_weight.rows == pred.rows &&
                                       cfg.row_weight.cols == 1 && cfg.row_weight.contiguous()),
           "row_weight must be fp32 [rows of pred, 1], not ", cfg.row_weight.shape());
  return c;
}

OpCheck check_sum_squares(const View& g, const double* out) {
  OpCheck c("sum_squares", {{"g", &g}});
  c.well_formed();
  c.expect(out != nullptr, "out must be present");
  return c;
}

OpCheck check_adamw_step(const View& param, const View& grad, const View& m, const View& v) {
  return check_elementwise("adamw_step", {{"param", &param}, {"grad", &grad}, {"m", &m}, {"v", &v}});
}

namespace {

// The key count of each segment's queries: query rows [q[s], q[s+1]) over keys [k[s], k[s+1]).
void segment_rules(const OpCheck& c, const AttnSegments& seg, int64_t Tq, int64_t Tk, bool causal) {
  c.expect(seg.n >= 0 && (seg.n == 0 || seg.q_offsets), "the segments' q_offsets must be given");
  if (seg.n == 0) {
    c.expect(Tq == 0, "no segments for ", Tq, " query rows");
    return;
  }
  const int64_t* q = seg.q_offsets;
  const int64_t* k = seg.k_offsets ? seg.k_offsets : seg.q_offsets;
  c.expect(q[0] == 0 && k[0] == 0, "segment offsets must start at 0");
  for (int s = 0; s < seg.n; ++s) {
    const int64_t lq = q[s + 1] - q[s], lk = k[s + 1] - k[s];
    c.expect(lq >= 0 && lk >= 0, "segment ", s, " has negative length (offsets must ascend)");
    c.expect(lq == 0 || lk > 0, "segment ", s, " has ", lq, " queries and no key");
    c.expect(!causal || lk >= lq, "causal segment ", s, " has ", lq, " queries but ", lk,
                                       " keys: its first queries would see no key");
  }
  c.expect(q[seg.n] == Tq, "the segments cover ", q[seg.n], " query rows, q has ", Tq);
  c.expect(k[seg.n] == Tk, "the segments cover ", k[seg.n], " key rows, k has ", Tk);
}

}  // namespace

OpCheck check_encoder_attention(const View& q, const View& k, const View& v, const View& bias,
                                const AttnBias& bias_kind, const View& out, const View& lse,
                                const EncoderAttnConfig& cfg, const AttnSegments& segments) {
  OpCheck c("encoder_attention_forward",
            {{"q", &q}, {"k", &k}, {"v", &v}, {"bias", &bias}, {"out", &out}, {"lse", &lse}});
  c.well_formed();
  c.expect(!q.absent() && !k.absent() && !v.absent() && !out.absent(), "q, k, v and out must be present");
  c.expect(cfg.q_heads > 0 && cfg.kv_heads > 0 && cfg.head_dim > 0 && cfg.q_heads % cfg.kv_heads == 0,
           "q_heads ", cfg.q_heads, " must be a positive multiple of kv_heads ", cfg.kv_heads,
               " and head_dim ", cfg.head_dim, " positive");
  c.expect(q.cols == int64_t(cfg.q_heads) * cfg.head_dim, "q must be [Tq, q_heads·head_dim] with q_heads ",
                                                                cfg.q_heads, ", head_dim ", cfg.head_dim);
  c.expect(k.cols == int64_t(cfg.kv_heads) * cfg.head_dim && v.cols == k.cols && v.rows == k.rows,
           "k and v must be [Tk, kv_heads·head_dim] with kv_heads ", cfg.kv_heads);
  c.same_shape(q, out, "q", "out");
  c.expect(out.contiguous(), "out must be contiguous");
  c.expect(lse.absent() || (lse.rows == q.rows && lse.cols == cfg.q_heads && lse.contiguous()),
           "lse must be [Tq, q_heads]");
  c.expect(std::isfinite(cfg.scale) && cfg.scale > 0, "scale ", cfg.scale, " must be positive");
  segment_rules(c, segments, q.rows, k.rows, cfg.causal);
  switch (bias_kind.kind) {
    case AttnBiasKind::none:
      c.expect(bias.absent(), "bias given with bias kind none");
      break;
    case AttnBiasKind::dense: {
      c.expect(!bias.absent() && bias.contiguous(), "a dense bias must be present and contiguous");
      const int64_t* qo = segments.q_offsets;
      const int64_t* ko = segments.k_offsets ? segments.k_offsets : segments.q_offsets;
      const int64_t lq = segments.n ? qo[1] - qo[0] : 0, lk = segments.n ? ko[1] - ko[0] : 0;
      for (int s = 1; s < segments.n; ++s)
        c.expect(qo[s + 1] - qo[s] == lq && ko[s + 1] - ko[s] == lk,
                 "a dense bias needs segments of one size; segment ", s, " differs from segment 0");
      c.expect(bias.rows == cfg.q_heads * lq && bias.cols == lk,
               "a dense bias must be [q_heads·Lq, Lk] = [", cfg.q_heads * lq, ", ", lk, "]");
      break;
    }
    case AttnBiasKind::relative_buckets:
      c.expect(!bias.absent() && bias.contiguous() && bias.rows == cfg.q_heads && bias.cols > 0,
               "a relative-bucket bias must be a contiguous [q_heads, n_buckets] table");
      c.expect(bias_kind.buckets && bias_kind.n_rel > 0 && bias_kind.rel_zero >= 0 &&
                   bias_kind.rel_zero < bias_kind.n_rel,
               "relative buckets need a bucket array of n_rel > 0 entries and 0 <= rel_zero < n_rel (n_rel ",
                   bias_kind.n_rel, ", rel_zero ", bias_kind.rel_zero, ")");
      break;
  }
  return c;
}

OpCheck check_pack_linear(const Ops& ops, const View& W, const View& packed) {
  OpCheck c("pack_linear", {{"W", &W}, {"packed", &packed}});
  c.well_formed();
  c.expect(!W.absent() && !packed.absent() && W.contiguous() && packed.contiguous(), "W and packed must be present and "
                                                                                    "contiguous");
  c.expect(packed.size() == ops.packed_linear_elements(W.rows, W.cols) && packed.dtype == W.dtype,
           "packed must hold packed_linear_elements(in, out) = ", ops.packed_linear_elements(W.rows, W.cols),
               " elements of W's dtype");
  return c;
}

OpCheck check_packed_linear(const Ops& ops, const View& x, const View& packed, const View& b, Activation act,
                            const View& pre, const View& y) {
  OpCheck c("packed_linear_forward", {{"x", &x}, {"packed", &packed}, {"b", &b}, {"pre", &pre}, {"y", &y}});
  c.well_formed();
  c.expect(!x.absent() && !packed.absent() && !y.absent() && packed.contiguous(), "x, packed and y must be present");
  c.expect(packed.size() == ops.packed_linear_elements(x.cols, y.cols) && packed.dtype == x.dtype,
           "packed must be the packed form of a W [", x.cols, ", ", y.cols, "] (",
               ops.packed_linear_elements(x.cols, y.cols), " elements of x's dtype)");
  // A linear's rules for the rest (b, pre, y), the W the packed form stands for in W's place.
  linear_forward_rules("packed_linear_forward", x, View{packed.data, packed.dtype, x.cols, y.cols, y.cols}, b, act,
                       pre, y, 0);
  return c;
}

OpCheck check_rope_half(const char* op, const View& x, const int32_t* pos, const RopeHalfConfig& cfg) {
  OpCheck c(op, {{"x", &x}});
  c.well_formed();
  c.expect(!x.absent() && pos, "x and pos must be present");
  c.expect(x.contiguous(), "x must be contiguous");
  c.expect(cfg.heads > 0 && cfg.head_dim > 0 && cfg.head_dim % 2 == 0 && x.cols == int64_t(cfg.heads) * cfg.head_dim,
           "x must be [T, heads·head_dim] with heads ", cfg.heads, " and an even head_dim ", cfg.head_dim);
  c.expect(std::isfinite(cfg.theta) && cfg.theta > 1, "theta ", cfg.theta, " must be above 1");
  return c;
}

OpCheck check_gated_activation(const char* op, Activation act, const View& gate, const View& up, const View& y,
                               const View& dgate, const View& dup) {
  const bool forward = dgate.absent() && dup.absent();
  const char* y_name = forward ? "y" : "dy";
  OpCheck c(op, {{"gate", &gate}, {"up", &up}, {y_name, &y}, {"dgate", &dgate}, {"dup", &dup}});
  c.well_formed();
  c.expect(act != Activation::none, "no activation given");
  c.expect(!gate.absent() && !up.absent() && !y.absent(), "gate, up and ", y_name, " must be present");
  c.same_shape(gate, up, "gate", "up");
  c.same_shape(gate, y, "gate", y_name);
  c.expect(dgate.absent() || (dgate.rows == gate.rows && dgate.cols == gate.cols), "dgate must have gate's shape");
  c.expect(dup.absent() || (dup.rows == gate.rows && dup.cols == gate.cols), "dup must have gate's shape");
  return c;
}

namespace {

OpCheck conv3d_rules(const char* op, const View& x, const View& weight, const View& bias, const View& y,
                     const ConvConfig& cfg) {
  OpCheck c(op, {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &y}});
  c.well_formed();
  c.expect(!x.absent() && !weight.absent() && !y.absent(), "x, weight and y must be present");
  c.contiguous();
  c.expect(cfg.batch > 0 && cfg.frames > 0 && cfg.height > 0 && cfg.width > 0,
           str("the clip must have positive sizes, not batch ", cfg.batch, " × [", cfg.frames, ", ", cfg.height, ", ",
               cfg.width, "]"));
  c.expect(cfg.kt > 0 && cfg.kh > 0 && cfg.kw > 0 && cfg.st > 0 && cfg.sh > 0 && cfg.sw > 0,
           str("kernel [", cfg.kt, ", ", cfg.kh, ", ", cfg.kw, "] and stride [", cfg.st, ", ", cfg.sh, ", ", cfg.sw,
               "] must be positive"));
  const int pads[6] = {cfg.pad_front, cfg.pad_back, cfg.pad_top, cfg.pad_bottom, cfg.pad_left, cfg.pad_right};
  const int kernel[6] = {cfg.kt, cfg.kt, cfg.kh, cfg.kh, cfg.kw, cfg.kw};
  for (int i = 0; i < 6; ++i)
    c.expect(pads[i] >= 0 && pads[i] < kernel[i],
             str("padding (front, back, top, bottom, left, right) must be in [0, kernel): ", pads[i],
                 " against a kernel of ", kernel[i]));
  c.expect(cfg.frames + cfg.pad_front + cfg.pad_back >= cfg.kt && cfg.height + cfg.pad_top + cfg.pad_bottom >= cfg.kh &&
               cfg.width + cfg.pad_left + cfg.pad_right >= cfg.kw,
           str("the padded clip [", cfg.frames + cfg.pad_front + cfg.pad_back, ", ",
               cfg.height + cfg.pad_top + cfg.pad_bottom, ", ", cfg.width + cfg.pad_left + cfg.pad_right,
               "] is smaller than the kernel [", cfg.kt, ", ", cfg.kh, ", ", cfg.kw, "]"));
  c.expect(x.rows == cfg.in_rows(), str("x must have batch·T·H·W = ", cfg.in_rows(), " rows"));
  c.expect(weight.rows == cfg.taps() * x.cols,
           str("weight must be [kt·kh·kw·Ci, Co] = [", cfg.taps() * x.cols, ", ", y.cols, "]"));
  c.expect(weight.cols == y.cols, "weight and y differ in output channels");
  c.expect(bias.absent() || (bias.rows == 1 && bias.cols == y.cols), "bias must be [1, Co]");
  c.expect(y.rows == cfg.out_rows(),
           str("y must have batch·To·Ho·Wo = ", cfg.batch, "·", cfg.out_frames(), "·", cfg.out_height(), "·",
               cfg.out_width(), " = ", cfg.out_rows(), " rows"));
  return c;
}

}  // namespace

OpCheck check_conv3d(const View& x, const View& weight, const View& bias, const View& y, const ConvConfig& cfg) {
  return conv3d_rules("conv3d_forward", x, weight, bias, y, cfg);
}

OpCheck check_pack_conv3d(const Ops& ops, const View& weight, int kt, const View& packed) {
  OpCheck c("pack_conv3d", {{"weight", &weight}, {"packed", &packed}});
  c.well_formed();
  c.expect(!weight.absent() && !packed.absent() && weight.contiguous() && packed.contiguous(),
           "weight and packed must be present and contiguous");
  c.expect(kt > 0 && weight.rows % kt == 0, "kt ", kt, " must be positive and divide the weight's rows");
  const int64_t elements = ops.packed_conv3d_elements(kt, weight.rows / std::max(kt, 1), weight.cols);
  c.expect(packed.size() == elements && packed.dtype == weight.dtype,
           "packed must hold packed_conv3d_elements(kt, rows/kt, Co) = ", elements, " elements of the weight's dtype");
  return c;
}

OpCheck check_packed_conv3d(const Ops& ops, const View& x, const View& packed, const View& bias, const View& y,
                            const ConvConfig& cfg) {
  OpCheck c("packed_conv3d_forward", {{"x", &x}, {"packed", &packed}, {"bias", &bias}, {"y", &y}});
  c.well_formed();
  c.expect(!x.absent() && !packed.absent() && !y.absent() && packed.contiguous(), "x, packed and y must be present");
  const int64_t spatial = int64_t(cfg.kh) * cfg.kw * x.cols, elements = ops.packed_conv3d_elements(cfg.kt, spatial, y.cols);
  c.expect(packed.size() == elements && packed.dtype == x.dtype, "packed must be the packed form of a weight [",
           cfg.taps() * x.cols, ", ", y.cols, "] (", elements, " elements of x's dtype)");
  conv3d_rules("packed_conv3d_forward", x, View{packed.data, packed.dtype, cfg.taps() * x.cols, y.cols, y.cols}, bias,
               y, cfg);
  return c;
}

OpCheck check_pixel_unshuffle(const View& x, const View& y, const UnshuffleConfig& cfg) {
  OpCheck c("pixel_unshuffle_forward", {{"x", &x}, {"y", &y}});
  c.well_formed();
  c.expect(!x.absent() && !y.absent(), "x and y must be present");
  c.contiguous();
  c.expect(cfg.batch > 0 && cfg.frames > 0 && cfg.height > 0 && cfg.width > 0 && cfg.ft > 0 && cfg.fs > 0 &&
               cfg.group > 0 && cfg.pad_front >= 0,
           "sizes, factors and group must be positive (pad_front non-negative)");
  c.expect(cfg.height % cfg.fs == 0 && cfg.width % cfg.fs == 0,
           str("the space factor ", cfg.fs, " must divide H ", cfg.height, " and W ", cfg.width));
  c.expect((cfg.frames + cfg.pad_front) % cfg.ft == 0,
           str("the time factor ", cfg.ft, " must divide T + pad_front = ", cfg.frames + cfg.pad_front));
  const int64_t unshuffled = x.cols * cfg.ft * cfg.fs * cfg.fs;
  c.expect(unshuffled % cfg.group == 0, str("group ", cfg.group, " must divide C·ft·fs² = ", unshuffled));
  c.expect(x.rows == int64_t(cfg.batch) * cfg.frames * cfg.height * cfg.width,
           str("x must have batch·T·H·W = ", int64_t(cfg.batch) * cfg.frames * cfg.height * cfg.width, " rows"));
  const int64_t rows = int64_t(cfg.batch) * cfg.out_frames() * (cfg.height / cfg.fs) * (cfg.width / cfg.fs);
  c.expect(y.rows == rows && y.cols == unshuffled / cfg.group,
           str("y must be [batch·To·Ho·Wo, C·ft·fs²/group] = [", rows, ", ", unshuffled / cfg.group, "]"));
  return c;
}

OpCheck check_channel_rmsnorm(const View& x, const View& gamma, Activation act, const View& y) {
  OpCheck c("channel_rmsnorm_forward", {{"x", &x}, {"gamma", &gamma}, {"y", &y}});
  c.well_formed();
  c.expect(!x.absent() && !gamma.absent() && !y.absent(), "x, gamma and y must be present");
  c.contiguous();
  c.same_shape(x, y, "x", "y");
  c.expect(gamma.rows == 1 && gamma.cols == x.cols, "gamma must be [1, C]");
  c.expect(act == Activation::none || act == Activation::silu, "the activation must be none or silu");
  return c;
}

}  // namespace emb
