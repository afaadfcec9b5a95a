#include "model/gr00t.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/embedding.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/modulate.hpp"
#include "kernels/cpu/norm.hpp"
#include "model/activation_plan.hpp"
#include "model/rows.hpp"

namespace emb {
namespace {

constexpr int kTimeFreqs = 256;  // sinus(tq, 256) feeds time_enc

void zero(float* p, int64_t n) { std::memset(p, 0, size_t(n) * sizeof(float)); }

}  // namespace

Gr00tModel::Gr00tModel(const ModelConfig& cfg) : Model(cfg) {
  const int D = cfg.d_model, E = cfg.n_embodiments;
  reg_.begin_unit("encoders");
  vlln_ = reg_.add_layernorm("vlln", cfg.d_ctx);
  state_fc1_ = reg_.add_linear_emb("state_enc.fc1", E, cfg.state_dim, cfg.d_hidden_enc);
  state_fc2_ = reg_.add_linear_emb("state_enc.fc2", E, cfg.d_hidden_enc, D);
  act_fc1_ = reg_.add_linear_emb("action_enc.fc1", E, cfg.action_dim, D);
  act_fc2_ = reg_.add_linear_emb("action_enc.fc2", E, 2 * D, D);
  act_fc3_ = reg_.add_linear_emb("action_enc.fc3", E, D, D);
  future_tokens_ = reg_.add("future_tokens", {cfg.n_future, D}, ParamInit::normal, false);
  pos_emb_ = reg_.add("pos_emb", {cfg.horizon, D}, ParamInit::normal, false);
  time_fc1_ = reg_.add_linear("time_enc.fc1", kTimeFreqs, D);
  time_fc2_ = reg_.add_linear("time_enc.fc2", D, D);
  for (int l = 0; l < cfg.n_layers_vl; ++l) {
    reg_.begin_unit(str("vl_blocks.", l));
    vl_blocks_.add(add_vl_block(reg_, l, cfg));
  }
  for (int l = 0; l < cfg.n_layers; ++l) {
    reg_.begin_unit(str("blocks.", l));
    blocks_.add(add_gr00t_block(reg_, l, cfg));
  }
  reg_.begin_unit("head");
  head_unit_ = reg_.n_units() - 1;
  proj_out_1_ = reg_.add_linear("proj_out_1", D, 2 * D);
  proj_out_2_ = reg_.add_linear("proj_out_2", D, cfg.d_out);
  dec_fc1_ = reg_.add_linear_emb("action_dec.fc1", E, cfg.d_out, cfg.d_hidden_enc);
  dec_fc2_ = reg_.add_linear_emb("action_dec.fc2", E, cfg.d_hidden_enc, cfg.action_dim);
}

std::vector<double> Gr00tModel::loss_counts(const PackedBatch& batch) const {
  double n = 0;
  for (float m : batch.action_mask) n += m;
  return {n};
}

void Gr00tModel::plan_activations(ActivationPlan& plan, int64_t T, int64_t Tc, int B) {
  const int64_t D = cfg_.d_model, Dvl = cfg_.d_ctx, Dh = cfg_.d_hidden_enc, A = cfg_.action_dim;
  const int64_t Ta = int64_t(B) * cfg_.horizon, Dout = cfg_.d_out;
  Acts& a = a_;
  for (float** p : {&a.te1, &a.te1s, &a.temb, &a.stemb, &a.x, &a.dx, &a.dstemb, &a.dtemb, &a.dte1s, &a.dte1})
    *p = plan.floats(T * D);
  a.sin = plan.floats(T * kTimeFreqs);
  for (float** p : {&a.st1, &a.st1r, &a.dst1r, &a.dst1}) *p = plan.floats(B * Dh);
  for (float** p : {&a.st2, &a.dst2}) *p = plan.floats(B * D);
  for (float** p : {&a.ax, &a.v, &a.dv}) *p = plan.floats(Ta * A);
  a.a_tq = plan.floats(Ta);
  a.a_emb = plan.take<int32_t>(Ta);
  for (float** p : {&a.ae1, &a.a_sin, &a.ae2, &a.ae2s, &a.ae3, &a.hx, &a.hln, &a.hm, &a.dhm, &a.dhln, &a.dhx,
                    &a.dae3, &a.dae2s, &a.dae2, &a.dae1})
    *p = plan.floats(Ta * D);
  for (float** p : {&a.acat, &a.dacat, &a.hmod, &a.dhmod}) *p = plan.floats(Ta * 2 * D);
  for (float** p : {&a.hmod_rows, &a.dhmod_rows}) *p = plan.floats(T * 2 * D);
  for (float** p : {&a.hmean, &a.hrstd}) *p = plan.floats(Ta);
  for (float** p : {&a.hy, &a.dhy}) *p = plan.floats(Ta * Dout);
  for (float** p : {&a.d1, &a.d1r, &a.dd1r, &a.dd1}) *p = plan.floats(Ta * Dh);
  for (float** p : {&a.c, &a.dc}) *p = plan.floats(Tc * Dvl);
  for (float** p : {&a.vl_mean, &a.vl_rstd}) *p = plan.floats(Tc);
  a.work = plan.floats(std::max(T * D, Tc * Dvl));
  vl_blocks_.plan(plan, Tc, Tc, cfg_.recompute);
  blocks_.plan(plan, T, Tc, cfg_.recompute);
  std::vector<const BlockSpec*> specs;
  for (const BlockSpec& s : vl_blocks_.specs()) specs.push_back(&s);
  for (const BlockSpec& s : blocks_.specs()) specs.push_back(&s);
  plan_block_scratch(specs, T, Tc, plan, a.scratch);
}

// Time embedding, state/action/future tokens into x, and the vlln-normalised context into c.
void Gr00tModel::encode(const ParamAccess& P, const PackedBatch& b) {
  Acts& a = a_;
  const int64_t T = b.n_tokens, Tc = b.n_context, D = cfg_.d_model;
  const int B = b.n_samples, E = cfg_.n_embodiments, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc;
  const int64_t Ta = int64_t(layout_.action.size());

  const int64_t Tu = int64_t(time_rows_.t.size());
  cpu::sinus_embedding(time_rows_.t.data(), a.sin, Tu, kTimeFreqs);
  cpu::linear_forward(a.sin, P.p(time_fc1_.weight), P.p(time_fc1_.bias), a.te1, Tu, kTimeFreqs, int(D));
  cpu::silu_forward(a.te1, a.te1s, Tu * D);
  cpu::linear_forward(a.te1s, P.p(time_fc2_.weight), P.p(time_fc2_.bias), a.temb, Tu, int(D), int(D));
  cpu::silu_forward(a.temb, a.stemb, Tu * D);

  cpu::linear_emb_forward(b.state.data(), P.p(state_fc1_.weight), P.p(state_fc1_.bias), b.emb_id.data(), a.st1, B,
                          cfg_.state_dim, Dh, E);
  cpu::relu_forward(a.st1, a.st1r, int64_t(B) * Dh);
  cpu::linear_emb_forward(a.st1r, P.p(state_fc2_.weight), P.p(state_fc2_.bias), b.emb_id.data(), a.st2, B, Dh,
                          int(D), E);

  // Noisy actions x = (1 − τ)ε + τ·a, one row per action token.
  for (int64_t r = 0; r < Ta; ++r) {
    const int32_t t = layout_.action[size_t(r)], s = b.seq[size_t(t)], h = layout_.kind_index[size_t(t)];
    const float tau = draws_.tau[size_t(s)];
    const int64_t off = (int64_t(s) * cfg_.horizon + h) * A;
    for (int k = 0; k < A; ++k)
      a.ax[r * A + k] = (1.0f - tau) * draws_.noise[size_t(off + k)] + tau * b.actions[size_t(off + k)];
    a.a_emb[r] = b.emb_id[size_t(s)];
    a.a_tq[r] = float(draws_.tq[size_t(s)]);
  }
  cpu::linear_emb_forward(a.ax, P.p(act_fc1_.weight), P.p(act_fc1_.bias), a.a_emb, a.ae1, Ta, A, int(D), E);
  cpu::sinus_embedding(a.a_tq, a.a_sin, Ta, int(D));
  for (int64_t r = 0; r < Ta; ++r) {
    std::memcpy(a.acat + r * 2 * D, a.ae1 + r * D, size_t(D) * sizeof(float));
    std::memcpy(a.acat + r * 2 * D + D, a.a_sin + r * D, size_t(D) * sizeof(float));
  }
  cpu::linear_emb_forward(a.acat, P.p(act_fc2_.weight), P.p(act_fc2_.bias), a.a_emb, a.ae2, Ta, int(2 * D), int(D),
                          E);
  cpu::silu_forward(a.ae2, a.ae2s, Ta * D);
  cpu::linear_emb_forward(a.ae2s, P.p(act_fc3_.weight), P.p(act_fc3_.bias), a.a_emb, a.ae3, Ta, int(D), int(D), E);

  zero(a.x, T * D);
  const float* pos_emb = P.p(pos_emb_);
  for (int64_t r = 0; r < Ta; ++r) {
    float* x = a.x + int64_t(layout_.action[size_t(r)]) * D;
    const float* pe = pos_emb + int64_t(layout_.kind_index[size_t(layout_.action[size_t(r)])]) * D;
    for (int64_t c = 0; c < D; ++c) x[c] = a.ae3[r * D + c] + pe[c];
  }
  for (int32_t t : layout_.state)
    std::memcpy(a.x + t * D, a.st2 + int64_t(b.seq[size_t(t)]) * D, size_t(D) * sizeof(float));
  const float* future = P.p(future_tokens_);
  for (int32_t t : layout_.future)
    std::memcpy(a.x + t * D, future + int64_t(layout_.kind_index[size_t(t)]) * D, size_t(D) * sizeof(float));

  cpu::layernorm_forward(b.context.data(), P.p(vlln_.weight), P.p(vlln_.bias), a.c, a.vl_mean, a.vl_rstd, Tc,
                         cfg_.d_ctx);
}

void Gr00tModel::encode_backward(const ParamAccess& P, const PackedBatch& b) {
  Acts& a = a_;
  const int64_t Tc = b.n_context, D = cfg_.d_model;
  const int B = b.n_samples, E = cfg_.n_embodiments, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc;
  const int64_t Ta = int64_t(layout_.action.size());

  cpu::layernorm_backward(b.context.data(), P.p(vlln_.weight), a.vl_mean, a.vl_rstd, a.dc, nullptr,
                          P.g(vlln_.weight), P.g(vlln_.bias), Tc, cfg_.d_ctx);

  gather_rows(a.dx, layout_.action, D, a.dae3);
  if (float* dpos = P.g(pos_emb_))
    for (int64_t r = 0; r < Ta; ++r) {
      float* d = dpos + int64_t(layout_.kind_index[size_t(layout_.action[size_t(r)])]) * D;
      for (int64_t c = 0; c < D; ++c) d[c] += a.dae3[r * D + c];
    }
  zero(a.dae2s, Ta * D), zero(a.dae2, Ta * D), zero(a.dacat, Ta * 2 * D);
  cpu::linear_emb_backward(a.ae2s, P.p(act_fc3_.weight), a.a_emb, a.dae3, a.dae2s, P.g(act_fc3_.weight),
                           P.g(act_fc3_.bias), Ta, int(D), int(D), E);
  cpu::silu_backward(a.ae2, a.dae2s, a.dae2, Ta * D);
  cpu::linear_emb_backward(a.acat, P.p(act_fc2_.weight), a.a_emb, a.dae2, a.dacat, P.g(act_fc2_.weight),
                           P.g(act_fc2_.bias), Ta, int(2 * D), int(D), E);
  for (int64_t r = 0; r < Ta; ++r) std::memcpy(a.dae1 + r * D, a.dacat + r * 2 * D, size_t(D) * sizeof(float));
  cpu::linear_emb_backward(a.ax, P.p(act_fc1_.weight), a.a_emb, a.dae1, nullptr, P.g(act_fc1_.weight),
                           P.g(act_fc1_.bias), Ta, A, int(D), E);

  if (float* dfuture = P.g(future_tokens_))
    for (int32_t t : layout_.future) {
      float* d = dfuture + int64_t(layout_.kind_index[size_t(t)]) * D;
      for (int64_t c = 0; c < D; ++c) d[c] += a.dx[t * D + c];
    }

  zero(a.dst2, int64_t(B) * D), zero(a.dst1r, int64_t(B) * Dh), zero(a.dst1, int64_t(B) * Dh);
  for (int32_t t : layout_.state)
    std::memcpy(a.dst2 + int64_t(b.seq[size_t(t)]) * D, a.dx + t * D, size_t(D) * sizeof(float));
  cpu::linear_emb_backward(a.st1r, P.p(state_fc2_.weight), b.emb_id.data(), a.dst2, a.dst1r, P.g(state_fc2_.weight),
                           P.g(state_fc2_.bias), B, Dh, int(D), E);
  cpu::relu_backward(a.st1, a.dst1r, a.dst1, int64_t(B) * Dh);
  cpu::linear_emb_backward(b.state.data(), P.p(state_fc1_.weight), b.emb_id.data(), a.dst1, nullptr,
                           P.g(state_fc1_.weight), P.g(state_fc1_.bias), B, cfg_.state_dim, Dh, E);

  const int64_t Tu = int64_t(time_rows_.t.size());
  zero(a.dtemb, Tu * D), zero(a.dte1s, Tu * D), zero(a.dte1, Tu * D);
  cpu::silu_backward(a.temb, a.dstemb, a.dtemb, Tu * D);
  cpu::linear_backward(a.te1s, P.p(time_fc2_.weight), a.dtemb, a.dte1s, P.g(time_fc2_.weight), P.g(time_fc2_.bias),
                       Tu, int(D), int(D));
  cpu::silu_backward(a.te1, a.dte1s, a.dte1, Tu * D);
  cpu::linear_backward(a.sin, P.p(time_fc1_.weight), a.dte1, nullptr, P.g(time_fc1_.weight), P.g(time_fc1_.bias),
                       Tu, kTimeFreqs, int(D));
}

// Output head on the action tokens and the masked flow-matching loss; with backward, also
// the loss gradient dv.
double Gr00tModel::head(const ParamAccess& P, const PackedBatch& b, double denominator, bool backward) {
  Acts& a = a_;
  const int64_t D = cfg_.d_model, Ta = int64_t(layout_.action.size());
  const int E = cfg_.n_embodiments, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc, Dout = cfg_.d_out;
  action_time_rows_.clear();
  for (int32_t t : layout_.action) action_time_rows_.push_back(time_rows_.row[size_t(t)]);
  gather_rows(a.x, layout_.action, D, a.hx);
  cpu::layernorm_forward(a.hx, nullptr, nullptr, a.hln, a.hmean, a.hrstd, Ta, int(D));
  cpu::linear_forward(a.stemb, P.p(proj_out_1_.weight), P.p(proj_out_1_.bias), a.hmod_rows,
                      int64_t(time_rows_.t.size()), int(D), int(2 * D));
  gather_rows(a.hmod_rows, action_time_rows_, 2 * D, a.hmod);
  cpu::modulate_forward(a.hln, a.hmod + D, a.hmod, 2 * D, a.hm, Ta, int(D));  // chunks: shift, scale
  cpu::linear_forward(a.hm, P.p(proj_out_2_.weight), P.p(proj_out_2_.bias), a.hy, Ta, int(D), Dout);
  cpu::linear_emb_forward(a.hy, P.p(dec_fc1_.weight), P.p(dec_fc1_.bias), a.a_emb, a.d1, Ta, Dout, Dh, E);
  cpu::relu_forward(a.d1, a.d1r, Ta * Dh);
  cpu::linear_emb_forward(a.d1r, P.p(dec_fc2_.weight), P.p(dec_fc2_.bias), a.a_emb, a.v, Ta, Dh, A, E);

  double loss = 0;
  for (int64_t r = 0; r < Ta; ++r) {
    const int32_t t = layout_.action[size_t(r)], s = b.seq[size_t(t)], h = layout_.kind_index[size_t(t)];
    const int64_t off = (int64_t(s) * cfg_.horizon + h) * A;
    for (int k = 0; k < A; ++k) {
      const float target = b.actions[size_t(off + k)] - draws_.noise[size_t(off + k)];
      const float diff = a.v[r * A + k] - target, mask = b.action_mask[size_t(off + k)];
      loss += double(mask) * diff * diff;
      if (backward) a.dv[r * A + k] = float(2.0 * mask * diff / denominator);
    }
  }
  return loss / denominator;
}

void Gr00tModel::head_backward(const ParamAccess& P) {
  Acts& a = a_;
  const int64_t D = cfg_.d_model, Ta = int64_t(layout_.action.size());
  const int E = cfg_.n_embodiments, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc, Dout = cfg_.d_out;
  zero(a.dd1r, Ta * Dh), zero(a.dd1, Ta * Dh), zero(a.dhy, Ta * Dout), zero(a.dhm, Ta * D);
  zero(a.dhln, Ta * D), zero(a.dhmod, Ta * 2 * D), zero(a.dhx, Ta * D);
  cpu::linear_emb_backward(a.d1r, P.p(dec_fc2_.weight), a.a_emb, a.dv, a.dd1r, P.g(dec_fc2_.weight),
                           P.g(dec_fc2_.bias), Ta, Dh, A, E);
  cpu::relu_backward(a.d1, a.dd1r, a.dd1, Ta * Dh);
  cpu::linear_emb_backward(a.hy, P.p(dec_fc1_.weight), a.a_emb, a.dd1, a.dhy, P.g(dec_fc1_.weight),
                           P.g(dec_fc1_.bias), Ta, Dout, Dh, E);
  cpu::linear_backward(a.hm, P.p(proj_out_2_.weight), a.dhy, a.dhm, P.g(proj_out_2_.weight), P.g(proj_out_2_.bias),
                       Ta, int(D), Dout);
  cpu::modulate_backward(a.hln, a.hmod + D, 2 * D, a.dhm, a.dhln, a.dhmod + D, a.dhmod, Ta, int(D));
  const int64_t Tu = int64_t(time_rows_.t.size());
  zero(a.dhmod_rows, Tu * 2 * D);
  scatter_add_rows(a.dhmod, action_time_rows_, 2 * D, a.dhmod_rows);
  cpu::linear_backward(a.stemb, P.p(proj_out_1_.weight), a.dhmod_rows, a.dstemb, P.g(proj_out_1_.weight),
                       P.g(proj_out_1_.bias), Tu, int(D), int(2 * D));
  cpu::layernorm_backward(a.hx, nullptr, a.hmean, a.hrstd, a.dhln, a.dhx, nullptr, nullptr, Ta, int(D));
}

double Gr00tModel::run(ParamAccess& P, bool backward, const PackedBatch& b, const std::vector<double>& denominators) {
  Acts& a = a_;
  const int64_t T = b.n_tokens, Tc = b.n_context, D = cfg_.d_model;
  EMB_CHECK(denominators[0] > 0, "gr00t loss: the action-mask denominator is ", denominators[0],
            " (no unmasked action element in the global batch)");

  BlockIO vl_io;
  vl_io.T = Tc, vl_io.Tc = Tc;
  vl_io.self_index = {cpu::AttnMask::full, b.cseq.data(), nullptr, nullptr, b.cseq.data(), nullptr, nullptr};
  vl_io.dcontext = nullptr;
  BlockIO io;
  io.T = T, io.Tc = Tc;
  io.cond = a.stemb, io.dcond = a.dstemb;
  io.n_cond = int64_t(time_rows_.t.size()), io.cond_row = time_rows_.row.data();
  io.context = a.c, io.dcontext = a.dc;
  io.self_index = {cpu::AttnMask::full, b.seq.data(), b.blk.data(), b.grp.data(), b.seq.data(), b.blk.data(),
                   b.grp.data()};
  io.cross_index = {cpu::AttnMask::cross, b.seq.data(), nullptr, nullptr, b.cseq.data(), nullptr, nullptr};
  io.pos = b.pos.data();

  P.enter_forward(0);
  encode(P, b);
  vl_blocks_.forward(P, vl_io, a.c);
  blocks_.forward(P, io, a.x);
  P.enter_forward(head_unit_);
  const double loss = head(P, b, denominators[0], backward);
  if (!backward) return loss;

  zero(a.dstemb, int64_t(time_rows_.t.size()) * D);
  P.enter_backward(head_unit_);
  head_backward(P);
  P.leave_backward(head_unit_);
  zero(a.dx, T * D), zero(a.dc, Tc * cfg_.d_ctx);
  scatter_add_rows(a.dhx, layout_.action, D, a.dx);
  blocks_.backward(P, io, a.scratch, a.dx, a.work);
  vl_blocks_.backward(P, vl_io, a.scratch, a.dc, a.work);
  P.enter_backward(0);
  encode_backward(P, b);
  P.leave_backward(0);
  return loss;
}

}  // namespace emb
