#include "kernels/ops_check.hpp"

#include "core/error.hpp"

namespace emb {

OpCheck::OpCheck(const char* op, std::initializer_list<Named> views) : op_(op), views_(views) {}

void OpCheck::expect(bool ok, const std::string& what) const {
  if (ok) return;
  std::string shapes;
  for (const Named& v : views_) shapes += str(shapes.empty() ? "" : ", ", v.first, " ", v.second->shape());
  throw Error(str(op_, ": ", what, "; ", shapes));
}

void OpCheck::well_formed() const {
  for (const Named& v : views_)
    if (!v.second->absent())
      expect(v.second->rows >= 0 && v.second->cols >= 0 && v.second->ld >= v.second->cols,
             str(v.first, " is not a matrix (rows, cols >= 0 and ld >= cols)"));
}

void OpCheck::contiguous() const {
  for (const Named& v : views_)
    if (!v.second->absent()) expect(v.second->contiguous(), str(v.first, " must be contiguous on this backend"));
}

void OpCheck::dtypes(std::initializer_list<DType> supported) const {
  for (const Named& v : views_) {
    if (v.second->absent()) continue;
    bool ok = false;
    for (DType t : supported) ok = ok || v.second->dtype == t;
    expect(ok, str(v.first, " has dtype ", dtype_name(v.second->dtype), ", unsupported on this backend"));
  }
}

void OpCheck::same_shape(const View& a, const View& b, const char* a_name, const char* b_name) const {
  expect(a.rows == b.rows && a.cols == b.cols, str(a_name, " and ", b_name, " differ in shape"));
}

OpCheck check_elementwise(const char* op, std::initializer_list<OpCheck::Named> views) {
  OpCheck c(op, views);
  c.well_formed();
  const View* first = nullptr;
  for (const OpCheck::Named& v : views) {
    c.expect(!v.second->absent(), str(v.first, " is absent"));
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

OpCheck check_rows(const char* op, const View& src, const RowIndex& src_rows, const View& dst,
                   const RowIndex& dst_rows) {
  OpCheck c(op, {{"src", &src}, {"dst", &dst}});
  c.well_formed();
  c.expect(!src.absent() && !dst.absent(), "src and dst must be present");
  c.expect(src.cols == dst.cols, "src and dst differ in columns");
  const int64_t n = !src_rows.absent() ? src_rows.n : !dst_rows.absent() ? dst_rows.n : src.rows;
  c.expect(src_rows.absent() || src_rows.n == n, str("src_rows has ", src_rows.n, " rows, dst_rows ", dst_rows.n));
  c.expect(dst_rows.absent() || dst_rows.n == n, str("src_rows has ", src_rows.n, " rows, dst_rows ", dst_rows.n));
  c.expect(!src_rows.absent() || n <= src.rows, str(n, " rows from src"));
  c.expect(!dst_rows.absent() || n <= dst.rows, str(n, " rows into dst"));
  return c;
}

OpCheck check_linear(const char* op, const View& x, const View& W, const View& b, Activation act, const View& pre,
                     const View& y, int n_emb) {
  OpCheck c(op, {{"x", &x}, {"W", &W}, {"b", &b}, {"pre", &pre}, {"y", &y}});
  c.well_formed();
  c.expect(!x.absent() && !W.absent() && !y.absent(), "x, W and y must be present");
  const int64_t E = n_emb > 0 ? n_emb : 1;
  c.expect(W.rows == E * x.cols, n_emb > 0 ? str("W must be [E·in, out] with E = ", n_emb) : "W must be [in, out]");
  c.expect(y.rows == x.rows && y.cols == W.cols, "y must be [x rows, W cols]");
  c.expect(b.absent() || (b.rows == E && b.cols == W.cols), "b must be [E, out]");
  c.expect((act == Activation::none) == pre.absent(), "pre is present exactly when there is an activation");
  c.expect(pre.absent() || (pre.rows == y.rows && pre.cols == y.cols), "pre must have y's shape");
  return c;
}

OpCheck check_linear_backward(const char* op, const View& x, const View& W, Activation act, const View& pre,
                              const View& dy, const View& dx, const View& dW, const View& db, int n_emb) {
  OpCheck c(op, {{"x", &x}, {"W", &W}, {"pre", &pre}, {"dy", &dy}, {"dx", &dx}, {"dW", &dW}, {"db", &db}});
  c.well_formed();
  c.expect(!x.absent() && !W.absent() && !dy.absent(), "x, W and dy must be present");
  const int64_t E = n_emb > 0 ? n_emb : 1;
  c.expect(W.rows == E * x.cols, n_emb > 0 ? str("W must be [E·in, out] with E = ", n_emb) : "W must be [in, out]");
  c.expect(dy.rows == x.rows && dy.cols == W.cols, "dy must be [x rows, W cols]");
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols), "dx must have x's shape");
  c.expect(dW.absent() || (dW.rows == W.rows && dW.cols == W.cols), "dW must have W's shape");
  c.expect(db.absent() || (db.rows == E && db.cols == W.cols), "db must be [E, out]");
  c.expect((act == Activation::none) == pre.absent(), "pre is present exactly when there is an activation");
  c.expect(pre.absent() || (pre.rows == dy.rows && pre.cols == dy.cols), "pre must have dy's shape");
  return c;
}

void check_fp8_shape(const OpCheck& c, const View& W) {
  c.expect(W.rows % 16 == 0 && W.cols % 16 == 0, "the FP8 GEMM needs in and out multiples of 16");
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

namespace {

// The rules an op shares with its fused form, on that op's OpCheck (which names the views).
void gated_residual_rules(const OpCheck& c, const View& x, const View& gate, const View& y, const char* y_name) {
  c.expect(!x.absent() && !y.absent(), str("x and ", y_name, " must be present"));
  c.same_shape(x, y, "x", y_name);
  c.expect(gate.absent() || (gate.rows == x.rows && gate.cols == x.cols), "gate must have x's shape");
}

void norm_modulate_rules(const char* op, const OpCheck& c, const View& x, const View& scale, const View& shift,
                         const View& normed, const View& y, const View& mean, const View& rstd) {
  check_norm(op, x, View{}, View{}, normed, mean, rstd);
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
  check_norm("norm_modulate_backward", x, View{}, View{}, normed, mean, rstd);
  c.expect(!scale.absent() && !dy.absent() && !mean.absent(), "scale, dy and mean must be present");
  c.same_shape(x, scale, "x", "scale"), c.same_shape(x, dy, "x", "dy");
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols), "dx must have x's shape");
  c.expect(dscale.absent() || (dscale.rows == x.rows && dscale.cols == x.cols && dscale.ld == scale.ld),
           "dscale must have scale's shape and row stride");
  c.expect(dshift.absent() || (dshift.rows == x.rows && dshift.cols == x.cols && dshift.ld == scale.ld),
           "dshift must have scale's shape and row stride");
  return c;
}

OpCheck check_attention(const char* op, const View& q, const View& k, const View& v, const View& out,
                        const View& lse, const AttnConfig& cfg, const AttnIndex& idx) {
  OpCheck c(op, {{"q", &q}, {"k", &k}, {"v", &v}, {"out", &out}, {"lse", &lse}});
  c.well_formed();
  c.expect(!q.absent() && !k.absent() && !v.absent() && !out.absent() && !lse.absent(),
           "q, k, v, out and lse must be present");
  c.expect(cfg.heads > 0 && cfg.head_dim > 0 && q.cols == int64_t(cfg.heads) * cfg.head_dim,
           str("q must be [Tq, heads·head_dim] with heads ", cfg.heads, ", head_dim ", cfg.head_dim));
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
           str("teacher_forcing needs frames_per_block >= 1 and window >= 1, not ", idx.tf.frames_per_block, " and ",
               idx.tf.window));
  return c;
}

}  // namespace emb
