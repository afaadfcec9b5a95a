#include "model/dit_block.hpp"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <utility>

#include "core/error.hpp"
#include "model/self_mask.hpp"

namespace emb {
namespace {

// q/k/v/o projections of `prefix` (attn1 or attn2): q and o are D -> D, k and v Dc -> D.
void add_attention(ParamRegistry& reg, const std::string& prefix, int D, int Dk, bool qk_norm, SublayerSpec& s) {
  s.q = reg.add_linear(prefix + ".q", D, D);
  s.k = reg.add_linear(prefix + ".k", Dk, D);
  s.v = reg.add_linear(prefix + ".v", Dk, D);
  s.o = reg.add_linear(prefix + ".o", D, D);
  s.qk_norm = qk_norm;
  if (qk_norm) {
    s.norm_q = reg.add_rmsnorm(prefix + ".norm_q", D);
    s.norm_k = reg.add_rmsnorm(prefix + ".norm_k", D);
  }
}

SublayerSpec ffn_sublayer(ParamRegistry& reg, const std::string& prefix, int D, int F) {
  SublayerSpec s;
  s.attention = false;
  s.fc1 = reg.add_linear(prefix + ".fc1", D, F);
  s.fc2 = reg.add_linear(prefix + ".fc2", F, D);
  return s;
}

// A DiT block of either family in the registry's open unit, before its parameters.
BlockSpec dit_block_spec(const ParamRegistry& reg, const ModelConfig& cfg, int Dc, Modulation modulation) {
  BlockSpec spec;
  spec.unit = reg.n_units() - 1;
  spec.D = cfg.d_model, spec.H = cfg.n_heads, spec.F = cfg.d_ff, spec.Dc = Dc;
  spec.fp8 = cfg.fp8;
  spec.modulation = modulation;
  return spec;
}

// gr00t's blocks are diffusers' BasicTransformerBlock with dropout p and final_dropout (MODEL.md
// "Dropout"): the attention output dropped twice, the feed-forward's hidden and output once.
// head_unit: the block's unit counted from the head's encoders unit (1 + its index over the vl
// blocks then the DiT blocks), so a trained context's units before the head (model.tune_visual)
// leave the masks as they are.
void add_dropout_sites(BlockSpec& spec, SublayerSpec& attn, SublayerSpec& ffn, double p, int head_unit) {
  spec.dropout = float(p);
  const int base = head_unit * kSitesPerBlock;
  attn.output_sites[0] = base + kAttnOut, attn.output_sites[1] = base + kAttnFinal;
  ffn.hidden_site = base + kFfHidden, ffn.output_sites[0] = base + kFfOut;
}

}  // namespace

TeacherForcing teacher_forcing_of(const ModelConfig& cfg) {
  return TeacherForcing{cfg.frames_per_block, cfg.max_chunk * cfg.frames_per_block + 1};
}

BlockSpec add_wan_block(ParamRegistry& reg, int l, const ModelConfig& cfg) {
  const std::string b = str("blocks.", l, ".");
  BlockSpec spec = dit_block_spec(reg, cfg, cfg.d_model, Modulation::ada6);
  spec.modulation_table = reg.add(b + "modulation", {6, cfg.d_model}, ParamInit::normal, false);

  SublayerSpec self;
  self.shift_chunk = 0, self.scale_chunk = 1, self.gate_chunk = 2;
  self.rope = RopeMode::d3;  // video tokens; the batch gives action and state tokens d1 (BlockIO::rope_modes)
  self.mask = dit_self_mask(cfg);
  add_attention(reg, b + "attn1", spec.D, spec.D, true, self);

  SublayerSpec cross;
  cross.norm = reg.add_layernorm(b + "norm3", spec.D);
  cross.cross = true;
  add_attention(reg, b + "attn2", spec.D, spec.Dc, true, cross);
  if (cfg.clip_tokens > 0) {  // upstream's WanI2VCrossAttention: k_img, v_img, norm_k_img over img_emb's rows
    cross.image = true;
    cross.k_img = reg.add_linear(b + "attn2.k_img", spec.D, spec.D);
    cross.v_img = reg.add_linear(b + "attn2.v_img", spec.D, spec.D);
    cross.norm_k_img = reg.add_rmsnorm(b + "attn2.norm_k_img", spec.D);
  }

  SublayerSpec ffn = ffn_sublayer(reg, b + "ffn", spec.D, spec.F);
  ffn.shift_chunk = 3, ffn.scale_chunk = 4, ffn.gate_chunk = 5;
  spec.sublayers = {self, cross, ffn};
  return spec;
}

// norm1 is AdaLayerNorm (eps 1e-5), norm3 a LayerNorm without affine parameters (upstream's
// norm_elementwise_affine false): it has none in the registry either.
BlockSpec add_gr00t_block(ParamRegistry& reg, int l, const ModelConfig& cfg) {
  const std::string b = str("blocks.", l, ".");
  BlockSpec spec = dit_block_spec(reg, cfg, cfg.d_ctx, Modulation::ada2);
  spec.ada2_linear = reg.add_linear(b + "norm1.linear", spec.D, 2 * spec.D);

  SublayerSpec attn;
  attn.scale_chunk = 0, attn.shift_chunk = 1;
  attn.norm_eps = kGr00tNormEps;
  attn.cross = l % 2 == 0;
  attn.mask = dit_self_mask(cfg);
  add_attention(reg, b + "attn1", spec.D, attn.cross ? spec.Dc : spec.D, false, attn);

  SublayerSpec ffn = ffn_sublayer(reg, b + "ffn", spec.D, spec.F);
  ffn.norm_eps = kGr00tNormEps;
  add_dropout_sites(spec, attn, ffn, cfg.dropout, 1 + cfg.n_layers_vl + l);
  spec.sublayers = {attn, ffn};
  return spec;
}

BlockSpec add_vl_block(ParamRegistry& reg, int l, const ModelConfig& cfg) {
  const std::string b = str("vl_blocks.", l, ".");
  BlockSpec spec;
  spec.unit = reg.n_units() - 1;
  spec.D = cfg.d_ctx, spec.H = cfg.n_heads_vl, spec.F = 4 * cfg.d_ctx;
  spec.fp8 = cfg.fp8;
  SublayerSpec attn;
  attn.norm = reg.add_layernorm(b + "ln1", spec.D);
  attn.norm_eps = kGr00tNormEps;
  add_attention(reg, b + "attn", spec.D, spec.D, false, attn);
  NormRef ln2 = reg.add_layernorm(b + "ln2", spec.D);
  SublayerSpec ffn = ffn_sublayer(reg, b + "ffn", spec.D, spec.F);
  ffn.norm = ln2;
  ffn.norm_eps = kGr00tNormEps;
  add_dropout_sites(spec, attn, ffn, cfg.dropout_vl, 1 + l);
  spec.sublayers = {attn, ffn};
  return spec;
}

bool fp8_eligible(const LinearRef& l) { return l.n_emb == 0 && l.in % 128 == 0 && l.out % 128 == 0; }

namespace {

// Whether the block runs its sublayer linear l (present: weight registered) on the FP8 path.
bool on_fp8_path(const BlockSpec& spec, const LinearRef& l) { return spec.fp8 && l.weight >= 0 && fp8_eligible(l); }

}  // namespace

int fp8_linear_count(const BlockSpec& spec) {
  int n = 0;
  for (const SublayerSpec& s : spec.sublayers)
    for (const LinearRef* l : {&s.q, &s.k, &s.v, &s.o, &s.k_img, &s.v_img, &s.fc1, &s.fc2}) n += on_fp8_path(spec, *l);
  return n;
}

void plan_block_acts(const BlockSpec& spec, int64_t T, int64_t Tc, int64_t Tci, ActivationPlan& plan,
                     BlockActs& acts, BlockActsPart part) {
  const int64_t D = spec.D;
  const bool cores = part != BlockActsPart::all_but_attention_cores, rest = part != BlockActsPart::attention_cores;
  acts.mod = rest && spec.n_chunks() ? plan.activations(T * spec.n_chunks() * D) : TensorPtr{};
  acts.mod_rows = rest && spec.modulation == Modulation::ada2 ? plan.activations(T * 2 * D) : TensorPtr{};
  acts.sub.assign(spec.sublayers.size(), SublayerActs{});
  for (size_t i = 0; i < spec.sublayers.size(); ++i) {
    const SublayerSpec& s = spec.sublayers[i];
    SublayerActs& a = acts.sub[i];
    if (rest) {
      a.x_in = plan.floats(T * D);
      a.mean = plan.floats(T);
      a.rstd = plan.floats(T);
      a.y = plan.activations(T * D);
    }
    if (s.attention ? !cores : !rest) continue;
    if (s.scale_chunk >= 0) a.ln_out = plan.activations(T * D);
    a.h = plan.activations(T * D);
    if (s.attention) {
      const int64_t Tk = s.cross ? Tc : T;
      a.q = plan.activations(T * D);
      a.k = plan.activations(Tk * D);
      a.v = plan.activations(Tk * D);
      if (s.qk_norm) {
        a.q_pre = plan.activations(T * D);
        a.k_pre = plan.activations(Tk * D);
        a.rstd_q = plan.floats(T);
        a.rstd_k = plan.floats(Tk);
      }
      a.att = plan.activations(T * D);
      a.lse = plan.floats(T * spec.H);
      if (s.image) {
        for (TensorPtr* p : {&a.k_img_pre, &a.k_img, &a.v_img}) *p = plan.activations(Tci * D);
        for (TensorPtr* p : {&a.att_img, &a.att_sum}) *p = plan.activations(T * D);
        a.rstd_k_img = plan.floats(Tci);
        a.lse_img = plan.floats(T * spec.H);
      }
    } else {
      a.a = plan.activations(T * spec.F);
      a.g = plan.activations(T * spec.F);
    }
  }
}

bool same_activation_layout(const BlockSpec& a, const BlockSpec& b) {
  if (a.D != b.D || a.H != b.H || a.F != b.F || a.n_chunks() != b.n_chunks() || a.modulation != b.modulation ||
      a.sublayers.size() != b.sublayers.size())
    return false;
  for (size_t i = 0; i < a.sublayers.size(); ++i) {
    const SublayerSpec &x = a.sublayers[i], &y = b.sublayers[i];
    if (x.attention != y.attention || x.cross != y.cross || x.qk_norm != y.qk_norm || x.image != y.image ||
        (x.scale_chunk >= 0) != (y.scale_chunk >= 0))
      return false;
  }
  return true;
}

void share_attention_cores(const BlockSpec& spec, const BlockActs& cores, BlockActs& acts) {
  for (size_t i = 0; i < spec.sublayers.size(); ++i) {
    if (!spec.sublayers[i].attention) continue;
    const SublayerActs& c = cores.sub[i];
    SublayerActs& a = acts.sub[i];
    a.ln_out = c.ln_out, a.h = c.h, a.q_pre = c.q_pre, a.k_pre = c.k_pre, a.q = c.q, a.k = c.k, a.v = c.v;
    a.rstd_q = c.rstd_q, a.rstd_k = c.rstd_k, a.att = c.att, a.lse = c.lse;
    a.k_img_pre = c.k_img_pre, a.k_img = c.k_img, a.v_img = c.v_img, a.att_img = c.att_img, a.att_sum = c.att_sum;
    a.rstd_k_img = c.rstd_k_img, a.lse_img = c.lse_img;
  }
}

void plan_block_scratch(const std::vector<const BlockSpec*>& specs, int64_t T, int64_t Tc, int64_t Tci,
                        ActivationPlan& plan, BlockScratch& s) {
  int64_t D = 0, F = 0, Dc = 0, chunks = 1;
  bool ada2 = false, dropout = false, qk_norm = false;
  for (const BlockSpec* b : specs) {
    D = std::max<int64_t>(D, b->D), F = std::max<int64_t>(F, b->F), Dc = std::max<int64_t>(Dc, b->Dc),
    chunks = std::max<int64_t>(chunks, b->n_chunks());
    ada2 = ada2 || b->modulation == Modulation::ada2, dropout = dropout || b->dropout > 0;
    for (const SublayerSpec& sub : b->sublayers) qk_norm = qk_norm || sub.qk_norm;
  }
  const int64_t rows = std::max({T, Tc, Tci});  // vl blocks run over the context tokens; k_img over the image's
  s.dmod = plan.activations(rows * chunks * D);
  s.dmod_rows = ada2 ? plan.activations(rows * 2 * D) : TensorPtr{};
  for (TensorPtr* p : {&s.dh, &s.dy, &s.datt, &s.dq, &s.dk, &s.dv}) *p = plan.activations(rows * D);
  if (qk_norm)
    for (TensorPtr* p : {&s.dq_pre, &s.dk_pre}) *p = plan.activations(rows * D);
  s.dg = plan.activations(rows * F);
  s.ddrop = dropout ? plan.activations(rows * std::max(D, F)) : TensorPtr{};
  // The context's gradient [Tc, Dc], the image context's [Tci, D] or ada2's conditioning's
  // [n_cond ≤ T, D].
  s.dinput = plan.conversion(std::max({Tc * Dc, Tci * D, ada2 ? T * D : 0}));
}

namespace {

View rows(const float* p, int64_t n, int64_t cols) { return view(p, n, cols); }
View rows(const TensorPtr& p, int64_t n, int64_t cols) { return p.rows(n, cols); }

// The fp32 gradient `target` of a block input from outside the block (the context, ada2's
// conditioning), as the block's linears accumulate into it: target itself when the block
// computes in fp32; with bf16 activations, whose linears write dx in their data's dtype, the
// scratch `staging` zeroed, which add_to_target() then adds to target.
class OutsideGradient {
 public:
  OutsideGradient(Ops& ops, const View& target, const TensorPtr& staging, DType activations)
      : ops_(ops),
        target_(target),
        grad_(target.absent() || activations == target.dtype ? target : staging.rows(target.rows, target.cols)) {
    if (staged()) ops_.zero(grad_);
  }
  const View& view() const { return grad_; }
  void add_to_target() const {
    if (staged()) ops_.add_rows(grad_, RowIndex{}, target_, RowIndex{});
  }

 private:
  bool staged() const { return grad_.data != target_.data; }
  Ops& ops_;
  View target_;
  View grad_;
};

// A sublayer linear l: x·W + b then act, on the FP8 path when the block runs l there.
void block_linear_forward(Ops& ops, const BlockSpec& spec, const LinearRef& l, const ParamAccess& P, const View& x,
                          Activation act, const View& pre, const View& y) {
  if (on_fp8_path(spec, l))
    ops.fp8_linear_forward(x, P.pv(l.weight), P.pv(l.bias), act, pre, y);
  else
    ops.linear_forward(x, P.pv(l.weight), P.pv(l.bias), act, pre, y);
}

void block_linear_backward(Ops& ops, const BlockSpec& spec, const LinearRef& l, const ParamAccess& P, const View& x,
                           Activation act, const View& pre, const View& dy, const View& dx) {
  if (on_fp8_path(spec, l))
    ops.fp8_linear_backward(x, P.pv(l.weight), act, pre, dy, dx, P.gv(l.weight), P.gv(l.bias));
  else
    ops.linear_backward(x, P.pv(l.weight), act, pre, dy, dx, P.gv(l.weight), P.gv(l.bias));
}

// The chunk of the [T, n_chunks·D] modulation tensor `mod` (absent for chunk < 0).
View chunk(const BlockSpec& spec, const TensorPtr& mod, int64_t T, int c) {
  if (c < 0) return View{};
  const int64_t D = spec.D;
  return mod.rows(T, int64_t(spec.n_chunks()) * D).cols_range(c * D, D);
}

// The sublayer's normalised input: x → a.h (adaLN: a.ln_out modulated; else affine LN).
void norm_forward(Ops& ops, const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P, const TensorPtr& mod,
                  int64_t T, const float* x, SublayerActs& a) {
  const int D = spec.D;
  if (s.scale_chunk >= 0) {
    ops.norm_modulate_forward(rows(x, T, D), chunk(spec, mod, T, s.scale_chunk), chunk(spec, mod, T, s.shift_chunk),
                              rows(a.ln_out, T, D), rows(a.h, T, D), rows(a.mean, T, 1), rows(a.rstd, T, 1),
                              s.norm_eps);
  } else {
    ops.layernorm_forward(rows(x, T, D), P.pv(s.norm.weight), P.pv(s.norm.bias), rows(a.h, T, D),
                          rows(a.mean, T, 1), rows(a.rstd, T, 1), s.norm_eps);
  }
}

// The dropout of `site` in this forward/backward; false where there is none (site −1, the
// block's p 0, or dropout off).
bool dropout_at(const BlockSpec& spec, const BlockIO& io, int site, DropoutConfig& cfg) {
  if (site < 0 || !io.dropout.on || spec.dropout <= 0) return false;
  cfg = DropoutConfig{spec.dropout, io.dropout.seed, io.dropout.step, uint32_t(site)};
  return true;
}

// x through the dropouts of `sites` in order, in place.
void dropout_forward_at(Ops& ops, const BlockSpec& spec, const BlockIO& io, std::initializer_list<int> sites,
                        const View& x) {
  DropoutConfig cfg;
  for (int site : sites)
    if (dropout_at(spec, io, site, cfg)) ops.dropout_forward(x, x, cfg, io.dropout.rows);
}

// The gradient before the dropouts of `sites` (applied in that order in the forward) from dy,
// the gradient after them: their backwards, last site first, alternating between dy and
// `scratch` (same shape). Returns the view that holds it.
View dropout_backward_at(Ops& ops, const BlockSpec& spec, const BlockIO& io, std::initializer_list<int> sites,
                         const View& dy, const View& scratch) {
  View grad = dy, other = scratch;
  DropoutConfig cfg;
  for (auto site = std::rbegin(sites); site != std::rend(sites); ++site) {
    if (!dropout_at(spec, io, *site, cfg)) continue;
    ops.zero(other);
    ops.dropout_backward(grad, other, cfg, io.dropout.rows);
    std::swap(grad, other);
  }
  return grad;
}

AttnIndex sublayer_index(const SublayerSpec& s, const BlockIO& io) {
  AttnIndex idx = s.cross ? io.cross_index : io.self_index;
  if (!s.cross) idx.mask = s.mask;
  return idx;
}

// The image half of Wan's I2V cross-attention, after the text half: the same q over the image
// context's k_img (RMSNorm norm_k_img) and v_img → a.att_img; a.att_sum = a.att + a.att_img.
void image_attention_forward(Ops& ops, const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P,
                             const BlockIO& io, SublayerActs& a) {
  const int64_t T = io.T, Tci = io.Tci;
  const int D = spec.D;
  const View src = rows(io.image_context, Tci, D), k = rows(a.k_img, Tci, D), v = rows(a.v_img, Tci, D);
  block_linear_forward(ops, spec, s.k_img, P, src, Activation::none, View{}, rows(a.k_img_pre, Tci, D));
  block_linear_forward(ops, spec, s.v_img, P, src, Activation::none, View{}, v);
  ops.rmsnorm_forward(rows(a.k_img_pre, Tci, D), P.pv(s.norm_k_img.weight), k, rows(a.rstd_k_img, Tci, 1));
  ops.attention_forward(rows(a.q, T, D), k, v, rows(a.att_img, T, D), rows(a.lse_img, T, spec.H),
                        AttnConfig{spec.H, D / spec.H}, io.image_index);
  ops.add(rows(a.att, T, D), rows(a.att_img, T, D), rows(a.att_sum, T, D));
}

// The attention core: a.h (and the context) → q, k, v → a.att and its log-sum-exp.
void attention_core_forward(Ops& ops, const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P,
                            const BlockIO& io, SublayerActs& a) {
  const int64_t T = io.T;
  const int D = spec.D;
  const View src = s.cross ? rows(io.context, io.Tc, spec.Dc) : rows(a.h, T, D);
  const int64_t Tk = src.rows;
  const View q = rows(a.q, T, D), k = rows(a.k, Tk, D), v = rows(a.v, Tk, D);
  const View q_pre = s.qk_norm ? rows(a.q_pre, T, D) : q, k_pre = s.qk_norm ? rows(a.k_pre, Tk, D) : k;
  block_linear_forward(ops, spec, s.q, P, rows(a.h, T, D), Activation::none, View{}, q_pre);
  block_linear_forward(ops, spec, s.k, P, src, Activation::none, View{}, k_pre);
  block_linear_forward(ops, spec, s.v, P, src, Activation::none, View{}, v);
  if (s.qk_norm) {
    ops.rmsnorm_forward(q_pre, P.pv(s.norm_q.weight), q, rows(a.rstd_q, T, 1));
    ops.rmsnorm_forward(k_pre, P.pv(s.norm_k.weight), k, rows(a.rstd_k, Tk, 1));
  }
  const int hd = D / spec.H;
  if (!s.cross && s.rope != RopeMode::none) {
    const RopeConfig rope{s.rope, spec.H, hd, io.rope_modes};
    ops.rope_forward(q, io.pos, rope);
    ops.rope_forward(k, io.pos, rope);
  }
  ops.attention_forward(q, k, v, rows(a.att, T, D), rows(a.lse, T, spec.H), AttnConfig{spec.H, hd},
                        sublayer_index(s, io));
  if (s.image) image_attention_forward(ops, spec, s, P, io, a);
}

// The output projection's input: the attention output, or with the image context its sum with the text's.
const TensorPtr& attention_output(const SublayerSpec& s, const SublayerActs& a) { return s.image ? a.att_sum : a.att; }

// A sublayer's gated residual x += gate·y, left for the next sublayer to apply: an adaLN norm
// applies it in the same pass over x (residual_norm_modulate_forward), anything else before
// itself. The backward is unchanged (Ops::residual_norm_modulate_forward).
struct PendingResidual {
  View gate, y;  // y absent: none pending
};

void apply_residual(Ops& ops, const View& x, const PendingResidual& r) {
  if (!r.y.absent()) ops.gated_residual_forward(x, r.gate, r.y);
}

PendingResidual sublayer_forward(Ops& ops, const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P,
                                 const BlockIO& io, const TensorPtr& mod, SublayerActs& a, float* x,
                                 const PendingResidual& pending) {
  const int64_t T = io.T;
  const int D = spec.D;
  if (s.scale_chunk >= 0 && !pending.y.absent()) {
    ops.residual_norm_modulate_forward(rows(x, T, D), pending.gate, pending.y, rows(a.x_in, T, D),
                                       chunk(spec, mod, T, s.scale_chunk), chunk(spec, mod, T, s.shift_chunk),
                                       rows(a.ln_out, T, D), rows(a.h, T, D), rows(a.mean, T, 1), rows(a.rstd, T, 1),
                                       s.norm_eps);
  } else {
    apply_residual(ops, rows(x, T, D), pending);
    ops.copy(rows(x, T, D), rows(a.x_in, T, D));
    norm_forward(ops, spec, s, P, mod, T, x, a);
  }
  if (s.attention) {
    attention_core_forward(ops, spec, s, P, io, a);
    block_linear_forward(ops, spec, s.o, P, rows(attention_output(s, a), T, D), Activation::none, View{},
                         rows(a.y, T, D));
  } else {
    block_linear_forward(ops, spec, s.fc1, P, rows(a.h, T, D), Activation::gelu_tanh, rows(a.a, T, spec.F),
                         rows(a.g, T, spec.F));
    dropout_forward_at(ops, spec, io, {s.hidden_site}, rows(a.g, T, spec.F));  // in place: fc2's (saved) input
    block_linear_forward(ops, spec, s.fc2, P, rows(a.g, T, spec.F), Activation::none, View{}, rows(a.y, T, D));
  }
  dropout_forward_at(ops, spec, io, {s.output_sites[0], s.output_sites[1]}, rows(a.y, T, D));
  return PendingResidual{chunk(spec, mod, T, s.gate_chunk), rows(a.y, T, D)};
}

// The image half of the I2V cross-attention backward from datt: dq += its share; the image
// keys' and values' gradients through norm_k_img, k_img and v_img into the image context's. It
// runs before the text half, whose key and value gradients share the scratch.
void image_attention_backward(Ops& ops, const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P,
                              const BlockIO& io, const SublayerActs& a, const BlockScratch& w, const View& datt,
                              const View& dq) {
  const int64_t T = io.T, Tci = io.Tci;
  const int D = spec.D;
  const View dk = rows(w.dk, Tci, D), dv = rows(w.dv, Tci, D), dk_pre = rows(w.dk_pre, Tci, D);
  ops.zero(dk), ops.zero(dv), ops.zero(dk_pre);
  ops.attention_backward(rows(a.q, T, D), rows(a.k_img, Tci, D), rows(a.v_img, Tci, D), rows(a.att_img, T, D),
                         rows(a.lse_img, T, spec.H), datt, dq, dk, dv, AttnConfig{spec.H, D / spec.H}, io.image_index);
  ops.rmsnorm_backward(rows(a.k_img_pre, Tci, D), P.pv(s.norm_k_img.weight), rows(a.rstd_k_img, Tci, 1), dk, dk_pre,
                       P.gv(s.norm_k_img.weight));
  const View src = rows(io.image_context, Tci, D);
  const OutsideGradient dimage(ops, rows(io.dimage_context, Tci, D), w.dinput, a.h.dtype);
  block_linear_backward(ops, spec, s.k_img, P, src, Activation::none, View{}, dk_pre, dimage.view());
  block_linear_backward(ops, spec, s.v_img, P, src, Activation::none, View{}, dv, dimage.view());
  dimage.add_to_target();
}

// An attention sublayer's backward from dout (o's output gradient) into dh (its normalised
// input's) and the context's gradient.
void attention_sublayer_backward(Ops& ops, const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P,
                                 const BlockIO& io, const SublayerActs& a, const BlockScratch& w, const View& dout,
                                 const View& dh) {
  const int64_t T = io.T;
  const int D = spec.D;
  const View src = s.cross ? rows(io.context, io.Tc, spec.Dc) : rows(a.h, T, D);
  const int64_t Tk = src.rows;
  const int hd = D / spec.H;
  const View datt = rows(w.datt, T, D);
  ops.zero(datt);
  block_linear_backward(ops, spec, s.o, P, rows(attention_output(s, a), T, D), Activation::none, View{}, dout,
                        datt);
  const View dq = rows(w.dq, T, D), dk = rows(w.dk, Tk, D), dv = rows(w.dv, Tk, D);
  ops.zero(dq);
  if (s.image) image_attention_backward(ops, spec, s, P, io, a, w, datt, dq);
  ops.zero(dk), ops.zero(dv);
  ops.attention_backward(rows(a.q, T, D), rows(a.k, Tk, D), rows(a.v, Tk, D), rows(a.att, T, D),
                         rows(a.lse, T, spec.H), datt, dq, dk, dv, AttnConfig{spec.H, hd}, sublayer_index(s, io));
  if (!s.cross && s.rope != RopeMode::none) {
    const RopeConfig rope{s.rope, spec.H, hd, io.rope_modes};
    ops.rope_backward(dq, io.pos, rope);
    ops.rope_backward(dk, io.pos, rope);
  }
  View dq_in = dq, dk_in = dk;
  if (s.qk_norm) {
    dq_in = rows(w.dq_pre, T, D), dk_in = rows(w.dk_pre, Tk, D);
    ops.zero(dq_in), ops.zero(dk_in);
    ops.rmsnorm_backward(rows(a.q_pre, T, D), P.pv(s.norm_q.weight), rows(a.rstd_q, T, 1), dq, dq_in,
                         P.gv(s.norm_q.weight));
    ops.rmsnorm_backward(rows(a.k_pre, Tk, D), P.pv(s.norm_k.weight), rows(a.rstd_k, Tk, 1), dk, dk_in,
                         P.gv(s.norm_k.weight));
  }
  const OutsideGradient dcontext(ops, s.cross ? rows(io.dcontext, io.Tc, spec.Dc) : View{}, w.dinput,
                                 a.h.dtype);
  const View dsrc = s.cross ? dcontext.view() : dh;
  block_linear_backward(ops, spec, s.q, P, rows(a.h, T, D), Activation::none, View{}, dq_in, dh);
  block_linear_backward(ops, spec, s.k, P, src, Activation::none, View{}, dk_in, dsrc);
  block_linear_backward(ops, spec, s.v, P, src, Activation::none, View{}, dv, dsrc);
  dcontext.add_to_target();
}

void sublayer_backward(Ops& ops, const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P,
                       const BlockIO& io, const TensorPtr& mod, const SublayerActs& a, const BlockScratch& w,
                       const TensorPtr& dmod, float* dx) {
  const int64_t T = io.T;
  const int D = spec.D;
  const View dy = rows(w.dy, T, D), dh = rows(w.dh, T, D);
  ops.zero(dy);
  ops.gated_residual_backward(chunk(spec, mod, T, s.gate_chunk), rows(a.y, T, D), rows(dx, T, D), dy,
                              chunk(spec, dmod, T, s.gate_chunk));
  // The gradient of the sublayer's last linear's output, before the output's dropouts.
  const View dout = dropout_backward_at(ops, spec, io, {s.output_sites[0], s.output_sites[1]}, dy,
                                        rows(w.ddrop, T, D));
  ops.zero(dh);
  if (s.attention) {
    attention_sublayer_backward(ops, spec, s, P, io, a, w, dout, dh);
  } else {
    const View dg = rows(w.dg, T, spec.F);
    ops.zero(dg);
    block_linear_backward(ops, spec, s.fc2, P, rows(a.g, T, spec.F), Activation::none, View{}, dout, dg);
    const View dgelu = dropout_backward_at(ops, spec, io, {s.hidden_site}, dg, rows(w.ddrop, T, spec.F));
    block_linear_backward(ops, spec, s.fc1, P, rows(a.h, T, D), Activation::gelu_tanh, rows(a.a, T, spec.F), dgelu,
                          dh);
  }
  if (s.scale_chunk >= 0) {
    ops.norm_modulate_backward(rows(a.x_in, T, D), rows(a.ln_out, T, D), chunk(spec, mod, T, s.scale_chunk),
                               rows(a.mean, T, 1), rows(a.rstd, T, 1), dh, rows(dx, T, D),
                               chunk(spec, dmod, T, s.scale_chunk), chunk(spec, dmod, T, s.shift_chunk));
  } else {
    ops.layernorm_backward(rows(a.x_in, T, D), P.pv(s.norm.weight), rows(a.mean, T, 1), rows(a.rstd, T, 1), dh,
                           rows(dx, T, D), P.gv(s.norm.weight), P.gv(s.norm.bias));
  }
}

}  // namespace

void block_forward(Ops& ops, const BlockSpec& spec, const ParamAccess& P, const BlockIO& io, BlockActs& acts,
                   float* x) {
  const int64_t T = io.T, C = int64_t(spec.n_chunks()) * spec.D;
  if (spec.modulation == Modulation::ada6) {
    ops.copy_rows(rows(io.cond, io.n_cond, C), io.cond_row, rows(acts.mod, T, C), RowIndex{});
    ops.add_bias(rows(acts.mod, T, C), P.pv(spec.modulation_table).flat());
  } else if (spec.modulation == Modulation::ada2) {
    ops.linear_forward(rows(io.cond, io.n_cond, spec.D), P.pv(spec.ada2_linear.weight), P.pv(spec.ada2_linear.bias),
                       Activation::none, View{}, rows(acts.mod_rows, io.n_cond, C));
    ops.copy_rows(rows(acts.mod_rows, io.n_cond, C), io.cond_row, rows(acts.mod, T, C), RowIndex{});
  }
  PendingResidual pending;
  for (size_t i = 0; i < spec.sublayers.size(); ++i)
    pending = sublayer_forward(ops, spec, spec.sublayers[i], P, io, acts.mod, acts.sub[i], x, pending);
  apply_residual(ops, rows(x, T, spec.D), pending);
}

void block_recompute_attention(Ops& ops, const BlockSpec& spec, const ParamAccess& P, const BlockIO& io,
                               BlockActs& acts) {
  for (size_t i = 0; i < spec.sublayers.size(); ++i) {
    const SublayerSpec& s = spec.sublayers[i];
    if (!s.attention) continue;
    norm_forward(ops, spec, s, P, acts.mod, io.T, acts.sub[i].x_in, acts.sub[i]);
    attention_core_forward(ops, spec, s, P, io, acts.sub[i]);
  }
}

void block_backward(Ops& ops, const BlockSpec& spec, const ParamAccess& P, const BlockIO& io, const BlockActs& acts,
                    const BlockScratch& scratch, float* dx) {
  const int64_t T = io.T, C = int64_t(spec.n_chunks()) * spec.D;
  if (C) ops.zero(rows(scratch.dmod, T, C));
  for (size_t i = spec.sublayers.size(); i-- > 0;)
    sublayer_backward(ops, spec, spec.sublayers[i], P, io, acts.mod, acts.sub[i], scratch, scratch.dmod, dx);
  if (C == 0) return;
  const View dmod = rows(scratch.dmod, T, C);
  // Per-token gradients summed into their timestep's row (ada6: straight into dcond).
  const View drows = spec.modulation == Modulation::ada6 ? rows(io.dcond, io.n_cond, C)
                                                         : rows(scratch.dmod_rows, io.n_cond, C);
  if (spec.modulation == Modulation::ada2) ops.zero(drows);
  ops.add_rows(dmod, RowIndex{}, drows, io.cond_row);
  if (spec.modulation == Modulation::ada6) {
    const View dtable = P.gv(spec.modulation_table);
    if (!dtable.absent()) ops.column_sums(dmod, dtable.flat());
  } else {
    const OutsideGradient dcond(ops, rows(io.dcond, io.n_cond, spec.D), scratch.dinput, dmod.dtype);
    ops.linear_backward(rows(io.cond, io.n_cond, spec.D), P.pv(spec.ada2_linear.weight), Activation::none, View{},
                        drows, dcond.view(), P.gv(spec.ada2_linear.weight), P.gv(spec.ada2_linear.bias));
    dcond.add_to_target();
  }
}

}  // namespace emb
