#include "model/dit_block.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/column_sum.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/modulate.hpp"
#include "kernels/cpu/norm.hpp"
#include "model/rows.hpp"

namespace emb {
namespace {

using cpu::AttnMask;

AttnMask self_mask(const ModelConfig& cfg, AttnMask family_mask) {
  switch (cfg.self_mask) {
    case SelfMask::full: return AttnMask::full;
    case SelfMask::block_causal: return AttnMask::block_causal;
    case SelfMask::prefix: return AttnMask::prefix;
    case SelfMask::family: break;
  }
  return family_mask;
}

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
  spec.modulation = modulation;
  return spec;
}

}  // namespace

BlockSpec add_wan_block(ParamRegistry& reg, int l, const ModelConfig& cfg) {
  const std::string b = str("blocks.", l, ".");
  BlockSpec spec = dit_block_spec(reg, cfg, cfg.d_model, Modulation::ada6);
  spec.modulation_table = reg.add(b + "modulation", {6, cfg.d_model}, ParamInit::normal, false);

  SublayerSpec self;
  self.shift_chunk = 0, self.scale_chunk = 1, self.gate_chunk = 2;
  self.rope = cpu::RopeMode::d3;
  self.mask = self_mask(cfg, AttnMask::block_causal);
  add_attention(reg, b + "attn1", spec.D, spec.D, true, self);

  SublayerSpec cross;
  cross.norm = reg.add_layernorm(b + "norm3", spec.D);
  cross.cross = true;
  add_attention(reg, b + "attn2", spec.D, spec.Dc, true, cross);

  SublayerSpec ffn = ffn_sublayer(reg, b + "ffn", spec.D, spec.F);
  ffn.shift_chunk = 3, ffn.scale_chunk = 4, ffn.gate_chunk = 5;
  spec.sublayers = {self, cross, ffn};
  return spec;
}

BlockSpec add_gr00t_block(ParamRegistry& reg, int l, const ModelConfig& cfg) {
  const std::string b = str("blocks.", l, ".");
  BlockSpec spec = dit_block_spec(reg, cfg, cfg.d_ctx, Modulation::ada2);
  spec.ada2_linear = reg.add_linear(b + "norm1.linear", spec.D, 2 * spec.D);

  SublayerSpec attn;
  attn.scale_chunk = 0, attn.shift_chunk = 1;
  attn.cross = l % 2 == 0;
  attn.mask = self_mask(cfg, AttnMask::full);
  add_attention(reg, b + "attn1", spec.D, attn.cross ? spec.Dc : spec.D, false, attn);

  NormRef norm3 = reg.add_layernorm(b + "norm3", spec.D);
  SublayerSpec ffn = ffn_sublayer(reg, b + "ffn", spec.D, spec.F);
  ffn.norm = norm3;
  spec.sublayers = {attn, ffn};
  return spec;
}

BlockSpec add_vl_block(ParamRegistry& reg, int l, const ModelConfig& cfg) {
  const std::string b = str("vl_blocks.", l, ".");
  BlockSpec spec;
  spec.unit = reg.n_units() - 1;
  spec.D = cfg.d_ctx, spec.H = cfg.n_heads_vl, spec.F = 4 * cfg.d_ctx;
  SublayerSpec attn;
  attn.norm = reg.add_layernorm(b + "ln1", spec.D);
  add_attention(reg, b + "attn", spec.D, spec.D, false, attn);
  NormRef ln2 = reg.add_layernorm(b + "ln2", spec.D);
  SublayerSpec ffn = ffn_sublayer(reg, b + "ffn", spec.D, spec.F);
  ffn.norm = ln2;
  spec.sublayers = {attn, ffn};
  return spec;
}

void plan_block_acts(const BlockSpec& spec, int64_t T, int64_t Tc, ActivationPlan& plan, BlockActs& acts,
                     BlockActsPart part) {
  const int64_t D = spec.D;
  const bool cores = part != BlockActsPart::all_but_attention_cores, rest = part != BlockActsPart::attention_cores;
  acts.mod = rest && spec.n_chunks() ? plan.floats(T * spec.n_chunks() * D) : nullptr;
  acts.mod_rows = rest && spec.modulation == Modulation::ada2 ? plan.floats(T * 2 * D) : nullptr;
  acts.sub.assign(spec.sublayers.size(), SublayerActs{});
  for (size_t i = 0; i < spec.sublayers.size(); ++i) {
    const SublayerSpec& s = spec.sublayers[i];
    SublayerActs& a = acts.sub[i];
    if (rest) {
      a.x_in = plan.floats(T * D);
      a.mean = plan.floats(T);
      a.rstd = plan.floats(T);
      a.y = plan.floats(T * D);
    }
    if (s.attention ? !cores : !rest) continue;
    if (s.scale_chunk >= 0) a.ln_out = plan.floats(T * D);
    a.h = plan.floats(T * D);
    if (s.attention) {
      const int64_t Tk = s.cross ? Tc : T;
      a.q = plan.floats(T * D);
      a.k = plan.floats(Tk * D);
      a.v = plan.floats(Tk * D);
      if (s.qk_norm) {
        a.q_pre = plan.floats(T * D);
        a.k_pre = plan.floats(Tk * D);
        a.rstd_q = plan.floats(T);
        a.rstd_k = plan.floats(Tk);
      }
      a.att = plan.floats(T * D);
      a.lse = plan.floats(T * spec.H);
    } else {
      a.a = plan.floats(T * spec.F);
      a.g = plan.floats(T * spec.F);
    }
  }
}

void share_attention_cores(const BlockSpec& spec, const BlockActs& cores, BlockActs& acts) {
  for (size_t i = 0; i < spec.sublayers.size(); ++i) {
    if (!spec.sublayers[i].attention) continue;
    const SublayerActs& c = cores.sub[i];
    SublayerActs& a = acts.sub[i];
    a.ln_out = c.ln_out, a.h = c.h, a.q_pre = c.q_pre, a.k_pre = c.k_pre, a.q = c.q, a.k = c.k, a.v = c.v;
    a.rstd_q = c.rstd_q, a.rstd_k = c.rstd_k, a.att = c.att, a.lse = c.lse;
  }
}

void plan_block_scratch(const std::vector<const BlockSpec*>& specs, int64_t T, int64_t Tc, ActivationPlan& plan,
                        BlockScratch& s) {
  int64_t D = 0, F = 0, chunks = 1;
  for (const BlockSpec* b : specs)
    D = std::max<int64_t>(D, b->D), F = std::max<int64_t>(F, b->F), chunks = std::max<int64_t>(chunks, b->n_chunks());
  const int64_t rows = std::max(T, Tc);  // vl blocks run over the context tokens
  s.dmod = plan.floats(rows * chunks * D);
  s.dmod_rows = plan.floats(rows * 2 * D);
  for (float** p : {&s.dh, &s.dln, &s.dy, &s.datt, &s.dq, &s.dk, &s.dv, &s.dq_pre, &s.dk_pre}) *p = plan.floats(rows * D);
  s.da = plan.floats(rows * F);
  s.dg = plan.floats(rows * F);
}

namespace {

// The sublayer's normalised input: x → a.h (adaLN: a.ln_out modulated; else affine LN).
void norm_forward(const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P, const float* mod, int64_t T,
                  const float* x, SublayerActs& a) {
  const int D = spec.D, ld = spec.n_chunks() * D;
  if (s.scale_chunk >= 0) {
    cpu::layernorm_forward(x, nullptr, nullptr, a.ln_out, a.mean, a.rstd, T, D);
    cpu::modulate_forward(a.ln_out, mod + s.scale_chunk * D, mod + s.shift_chunk * D, ld, a.h, T, D);
  } else {
    cpu::layernorm_forward(x, P.p(s.norm.weight), P.p(s.norm.bias), a.h, a.mean, a.rstd, T, D);
  }
}

// The attention core: a.h (and the context) → q, k, v → a.att and its log-sum-exp.
void attention_core_forward(const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P, const BlockIO& io,
                            SublayerActs& a) {
  const int64_t T = io.T;
  const int D = spec.D;
  const float* src = s.cross ? io.context : a.h;
  const int64_t Tk = s.cross ? io.Tc : T;
  const int Dk = s.cross ? spec.Dc : D;
  cpu::linear_forward(a.h, P.p(s.q.weight), P.p(s.q.bias), s.qk_norm ? a.q_pre : a.q, T, D, D);
  cpu::linear_forward(src, P.p(s.k.weight), P.p(s.k.bias), s.qk_norm ? a.k_pre : a.k, Tk, Dk, D);
  cpu::linear_forward(src, P.p(s.v.weight), P.p(s.v.bias), a.v, Tk, Dk, D);
  if (s.qk_norm) {
    cpu::rmsnorm_forward(a.q_pre, P.p(s.norm_q.weight), a.q, a.rstd_q, T, D);
    cpu::rmsnorm_forward(a.k_pre, P.p(s.norm_k.weight), a.k, a.rstd_k, Tk, D);
  }
  const int hd = D / spec.H;
  if (!s.cross && s.rope != cpu::RopeMode::none) {
    cpu::rope_forward(a.q, io.pos, T, spec.H, hd, s.rope);
    cpu::rope_forward(a.k, io.pos, T, spec.H, hd, s.rope);
  }
  cpu::AttnIndex idx = s.cross ? io.cross_index : io.self_index;
  if (!s.cross) idx.mask = s.mask;
  cpu::attention_forward(a.q, a.k, a.v, a.att, a.lse, T, Tk, spec.H, hd, idx);
}

void sublayer_forward(const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P, const BlockIO& io,
                      const float* mod, SublayerActs& a, float* x) {
  const int64_t T = io.T;
  const int D = spec.D, ld = spec.n_chunks() * D;
  std::memcpy(a.x_in, x, size_t(T * D) * sizeof(float));
  norm_forward(spec, s, P, mod, T, x, a);
  if (s.attention) {
    attention_core_forward(spec, s, P, io, a);
    cpu::linear_forward(a.att, P.p(s.o.weight), P.p(s.o.bias), a.y, T, D, D);
  } else {
    cpu::linear_forward(a.h, P.p(s.fc1.weight), P.p(s.fc1.bias), a.a, T, D, spec.F);
    cpu::gelu_tanh_forward(a.a, a.g, T * spec.F);
    cpu::linear_forward(a.g, P.p(s.fc2.weight), P.p(s.fc2.bias), a.y, T, spec.F, D);
  }
  cpu::gated_residual_forward(x, s.gate_chunk >= 0 ? mod + s.gate_chunk * D : nullptr, ld, a.y, T, D);
}

void sublayer_backward(const BlockSpec& spec, const SublayerSpec& s, const ParamAccess& P, const BlockIO& io,
                       const float* mod, const SublayerActs& a, const BlockScratch& w, float* dmod, float* dx) {
  const int64_t T = io.T;
  const int D = spec.D, ld = spec.n_chunks() * D;
  zero(w.dy, T * D);
  cpu::gated_residual_backward(s.gate_chunk >= 0 ? mod + s.gate_chunk * D : nullptr, ld, a.y, dx, w.dy,
                               s.gate_chunk >= 0 ? dmod + s.gate_chunk * D : nullptr, T, D);
  zero(w.dh, T * D);
  if (s.attention) {
    const float* src = s.cross ? io.context : a.h;
    const int64_t Tk = s.cross ? io.Tc : T;
    const int Dk = s.cross ? spec.Dc : D;
    const int hd = D / spec.H;
    zero(w.datt, T * D);
    cpu::linear_backward(a.att, P.p(s.o.weight), w.dy, w.datt, P.g(s.o.weight), P.g(s.o.bias), T, D, D);
    zero(w.dq, T * D), zero(w.dk, Tk * D), zero(w.dv, Tk * D);
    cpu::AttnIndex idx = s.cross ? io.cross_index : io.self_index;
    if (!s.cross) idx.mask = s.mask;
    cpu::attention_backward(a.q, a.k, a.v, a.att, a.lse, w.datt, w.dq, w.dk, w.dv, T, Tk, spec.H, hd, idx);
    if (!s.cross && s.rope != cpu::RopeMode::none) {
      cpu::rope_backward(w.dq, io.pos, T, spec.H, hd, s.rope);
      cpu::rope_backward(w.dk, io.pos, T, spec.H, hd, s.rope);
    }
    const float* dq = w.dq;
    const float* dk = w.dk;
    if (s.qk_norm) {
      zero(w.dq_pre, T * D), zero(w.dk_pre, Tk * D);
      cpu::rmsnorm_backward(a.q_pre, P.p(s.norm_q.weight), a.rstd_q, w.dq, w.dq_pre, P.g(s.norm_q.weight), T, D);
      cpu::rmsnorm_backward(a.k_pre, P.p(s.norm_k.weight), a.rstd_k, w.dk, w.dk_pre, P.g(s.norm_k.weight), Tk, D);
      dq = w.dq_pre, dk = w.dk_pre;
    }
    float* dsrc = s.cross ? io.dcontext : w.dh;
    cpu::linear_backward(a.h, P.p(s.q.weight), dq, w.dh, P.g(s.q.weight), P.g(s.q.bias), T, D, D);
    cpu::linear_backward(src, P.p(s.k.weight), dk, dsrc, P.g(s.k.weight), P.g(s.k.bias), Tk, Dk, D);
    cpu::linear_backward(src, P.p(s.v.weight), w.dv, dsrc, P.g(s.v.weight), P.g(s.v.bias), Tk, Dk, D);
  } else {
    zero(w.dg, T * spec.F), zero(w.da, T * spec.F);
    cpu::linear_backward(a.g, P.p(s.fc2.weight), w.dy, w.dg, P.g(s.fc2.weight), P.g(s.fc2.bias), T, spec.F, D);
    cpu::gelu_tanh_backward(a.a, w.dg, w.da, T * spec.F);
    cpu::linear_backward(a.h, P.p(s.fc1.weight), w.da, w.dh, P.g(s.fc1.weight), P.g(s.fc1.bias), T, D, spec.F);
  }
  if (s.scale_chunk >= 0) {
    zero(w.dln, T * D);
    cpu::modulate_backward(a.ln_out, mod + s.scale_chunk * D, ld, w.dh, w.dln, dmod + s.scale_chunk * D,
                           dmod + s.shift_chunk * D, T, D);
    cpu::layernorm_backward(a.x_in, nullptr, a.mean, a.rstd, w.dln, dx, nullptr, nullptr, T, D);
  } else {
    cpu::layernorm_backward(a.x_in, P.p(s.norm.weight), a.mean, a.rstd, w.dh, dx, P.g(s.norm.weight),
                            P.g(s.norm.bias), T, D);
  }
}

}  // namespace

void block_forward(const BlockSpec& spec, const ParamAccess& P, const BlockIO& io, BlockActs& acts, float* x) {
  const int64_t T = io.T, C = int64_t(spec.n_chunks()) * spec.D;
  if (spec.modulation == Modulation::ada6) {
    const float* table = P.p(spec.modulation_table);
#pragma omp parallel for
    for (int64_t i = 0; i < T; ++i) {
      const float* cond = io.cond + io.cond_row[i] * C;
      for (int64_t c = 0; c < C; ++c) acts.mod[i * C + c] = cond[c] + table[c];
    }
  } else if (spec.modulation == Modulation::ada2) {
    cpu::linear_forward(io.cond, P.p(spec.ada2_linear.weight), P.p(spec.ada2_linear.bias), acts.mod_rows, io.n_cond,
                        spec.D, int(C));
#pragma omp parallel for
    for (int64_t i = 0; i < T; ++i)
      std::memcpy(acts.mod + i * C, acts.mod_rows + io.cond_row[i] * C, size_t(C) * sizeof(float));
  }
  for (size_t i = 0; i < spec.sublayers.size(); ++i)
    sublayer_forward(spec, spec.sublayers[i], P, io, acts.mod, acts.sub[i], x);
}

void block_recompute_attention(const BlockSpec& spec, const ParamAccess& P, const BlockIO& io, BlockActs& acts) {
  for (size_t i = 0; i < spec.sublayers.size(); ++i) {
    const SublayerSpec& s = spec.sublayers[i];
    if (!s.attention) continue;
    norm_forward(spec, s, P, acts.mod, io.T, acts.sub[i].x_in, acts.sub[i]);
    attention_core_forward(spec, s, P, io, acts.sub[i]);
  }
}

void block_backward(const BlockSpec& spec, const ParamAccess& P, const BlockIO& io, const BlockActs& acts,
                    const BlockScratch& scratch, float* dx) {
  const int64_t T = io.T, C = int64_t(spec.n_chunks()) * spec.D;
  if (C) zero(scratch.dmod, T * C);
  for (size_t i = spec.sublayers.size(); i-- > 0;)
    sublayer_backward(spec, spec.sublayers[i], P, io, acts.mod, acts.sub[i], scratch, scratch.dmod, dx);
  if (C == 0) return;
  const float* dmod = scratch.dmod;
  // Per-token gradients summed into their timestep's row (ada6: straight into dcond).
  float* drows = spec.modulation == Modulation::ada6 ? io.dcond : scratch.dmod_rows;
  if (spec.modulation == Modulation::ada2) zero(drows, io.n_cond * C);
  for (int64_t i = 0; i < T; ++i) {
    float* d = drows + io.cond_row[i] * C;
    for (int64_t c = 0; c < C; ++c) d[c] += dmod[i * C + c];
  }
  if (spec.modulation == Modulation::ada6) {
    if (float* dtable = P.g(spec.modulation_table))
      cpu::accumulate_column_sums(T, int(C), dtable, [&](int64_t i, int c) { return double(dmod[i * C + c]); });
  } else {
    cpu::linear_backward(io.cond, P.p(spec.ada2_linear.weight), drows, io.dcond, P.g(spec.ada2_linear.weight),
                         P.g(spec.ada2_linear.bias), io.n_cond, spec.D, int(C));
  }
}

}  // namespace emb
