#include "kernels/ops_check.hpp"

#include <cmath>

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
  c.expect((idx.mask != AttnMask::block_causal || (idx.q_blk && idx.k_blk && idx.q_grp && idx.k_grp)) &&
               (idx.mask != AttnMask::prefix || (idx.q_grp && idx.k_grp)),
           "the index lacks the blk/grp arrays of its mask");
  return c;
}

namespace {

// The key count of each segment's queries: query rows [q[s], q[s+1]) over keys [k[s], k[s+1]).
void segment_rules(const OpCheck& c, const AttnSegments& seg, int64_t Tq, int64_t Tk, bool causal) {
  c.expect(seg.n >= 0 && (seg.n == 0 || seg.q_offsets), "the segments' q_offsets must be given");
  if (seg.n == 0) {
    c.expect(Tq == 0, str("no segments for ", Tq, " query rows"));
    return;
  }
  const int64_t* q = seg.q_offsets;
  const int64_t* k = seg.k_offsets ? seg.k_offsets : seg.q_offsets;
  c.expect(q[0] == 0 && k[0] == 0, "segment offsets must start at 0");
  for (int s = 0; s < seg.n; ++s) {
    const int64_t lq = q[s + 1] - q[s], lk = k[s + 1] - k[s];
    c.expect(lq >= 0 && lk >= 0, str("segment ", s, " has negative length (offsets must ascend)"));
    c.expect(lq == 0 || lk > 0, str("segment ", s, " has ", lq, " queries and no key"));
    c.expect(!causal || lk >= lq, str("causal segment ", s, " has ", lq, " queries but ", lk,
                                       " keys: its first queries would see no key"));
  }
  c.expect(q[seg.n] == Tq, str("the segments cover ", q[seg.n], " query rows, q has ", Tq));
  c.expect(k[seg.n] == Tk, str("the segments cover ", k[seg.n], " key rows, k has ", Tk));
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
           str("q_heads ", cfg.q_heads, " must be a positive multiple of kv_heads ", cfg.kv_heads,
               " and head_dim ", cfg.head_dim, " positive"));
  c.expect(q.cols == int64_t(cfg.q_heads) * cfg.head_dim, str("q must be [Tq, q_heads·head_dim] with q_heads ",
                                                                cfg.q_heads, ", head_dim ", cfg.head_dim));
  c.expect(k.cols == int64_t(cfg.kv_heads) * cfg.head_dim && v.cols == k.cols && v.rows == k.rows,
           str("k and v must be [Tk, kv_heads·head_dim] with kv_heads ", cfg.kv_heads));
  c.same_shape(q, out, "q", "out");
  c.expect(out.contiguous(), "out must be contiguous");
  c.expect(lse.absent() || (lse.rows == q.rows && lse.cols == cfg.q_heads && lse.contiguous()),
           "lse must be [Tq, q_heads]");
  c.expect(std::isfinite(cfg.scale) && cfg.scale > 0, str("scale ", cfg.scale, " must be positive"));
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
                 str("a dense bias needs segments of one size; segment ", s, " differs from segment 0"));
      c.expect(bias.rows == cfg.q_heads * lq && bias.cols == lk,
               str("a dense bias must be [q_heads·Lq, Lk] = [", cfg.q_heads * lq, ", ", lk, "]"));
      break;
    }
    case AttnBiasKind::relative_buckets:
      c.expect(!bias.absent() && bias.contiguous() && bias.rows == cfg.q_heads && bias.cols > 0,
               "a relative-bucket bias must be a contiguous [q_heads, n_buckets] table");
      c.expect(bias_kind.buckets && bias_kind.n_rel > 0 && bias_kind.rel_zero >= 0 &&
                   bias_kind.rel_zero < bias_kind.n_rel,
               str("relative buckets need a bucket array of n_rel > 0 entries and 0 <= rel_zero < n_rel (n_rel ",
                   bias_kind.n_rel, ", rel_zero ", bias_kind.rel_zero, ")"));
      break;
  }
  return c;
}

OpCheck check_rope_half(const char* op, const View& x, const int32_t* pos, const RopeHalfConfig& cfg) {
  OpCheck c(op, {{"x", &x}});
  c.well_formed();
  c.expect(!x.absent() && pos, "x and pos must be present");
  c.expect(x.contiguous(), "x must be contiguous");
  c.expect(cfg.heads > 0 && cfg.head_dim > 0 && cfg.head_dim % 2 == 0 && x.cols == int64_t(cfg.heads) * cfg.head_dim,
           str("x must be [T, heads·head_dim] with heads ", cfg.heads, " and an even head_dim ", cfg.head_dim));
  c.expect(std::isfinite(cfg.theta) && cfg.theta > 1, str("theta ", cfg.theta, " must be above 1"));
  return c;
}

OpCheck check_gated_activation(const char* op, Activation act, const View& gate, const View& up, const View& y,
                               const View& dgate, const View& dup) {
  const bool forward = dgate.absent() && dup.absent();
  const char* y_name = forward ? "y" : "dy";
  OpCheck c(op, {{"gate", &gate}, {"up", &up}, {y_name, &y}, {"dgate", &dgate}, {"dup", &dup}});
  c.well_formed();
  c.expect(act != Activation::none, "no activation given");
  c.expect(!gate.absent() && !up.absent() && !y.absent(), str("gate, up and ", y_name, " must be present"));
  c.same_shape(gate, up, "gate", "up");
  c.same_shape(gate, y, "gate", y_name);
  c.expect(dgate.absent() || (dgate.rows == gate.rows && dgate.cols == gate.cols), "dgate must have gate's shape");
  c.expect(dup.absent() || (dup.rows == gate.rows && dup.cols == gate.cols), "dup must have gate's shape");
  return c;
}

OpCheck check_conv3d(const View& x, const View& weight, const View& bias, const View& y, const ConvConfig& cfg) {
  OpCheck c("conv3d_forward", {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &y}});
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

OpCheck check_resize(const View& x, const View& y, const ResizeConfig& cfg) {
  OpCheck c("resize_forward", {{"x", &x}, {"y", &y}});
  c.well_formed();
  c.expect(!x.absent() && !y.absent(), "x and y must be present");
  c.contiguous();
  c.expect(cfg.mode == ResizeMode::bilinear || cfg.mode == ResizeMode::bicubic, "mode must be bilinear or bicubic");
  c.expect(cfg.batch > 0 && cfg.in_height > 0 && cfg.in_width > 0 && cfg.out_height > 0 && cfg.out_width > 0,
           str("sizes must be positive: batch ", cfg.batch, ", ", cfg.in_height, " × ", cfg.in_width, " -> ",
               cfg.out_height, " × ", cfg.out_width));
  c.expect(x.rows == int64_t(cfg.batch) * cfg.in_height * cfg.in_width,
           str("x must have batch·H·W = ", int64_t(cfg.batch) * cfg.in_height * cfg.in_width, " rows"));
  c.expect(y.rows == int64_t(cfg.batch) * cfg.out_height * cfg.out_width && y.cols == x.cols,
           str("y must be [batch·Ho·Wo, C] = [", int64_t(cfg.batch) * cfg.out_height * cfg.out_width, ", ", x.cols,
               "]"));
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
