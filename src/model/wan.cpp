#include "model/wan.hpp"

#include <cstring>

#include "core/error.hpp"
#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/column_sum.hpp"
#include "kernels/cpu/embedding.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/modulate.hpp"
#include "kernels/cpu/norm.hpp"
#include "model/activation_plan.hpp"
#include "model/rows.hpp"

namespace emb {
namespace {

constexpr int kTimeFreqs = 256;

void zero(float* p, int64_t n) { std::memset(p, 0, size_t(n) * sizeof(float)); }

}  // namespace

WanModel::WanModel(const ModelConfig& cfg) : Model(cfg) {
  const int D = cfg.d_model;
  reg_.begin_unit("encoders");
  patch_embed_ = reg_.add_linear("patch_embed", cfg.patch_dim_in(), D);
  text_fc1_ = reg_.add_linear("text_emb.fc1", cfg.d_ctx, D);
  text_fc2_ = reg_.add_linear("text_emb.fc2", D, D);
  time_fc1_ = reg_.add_linear("time_enc.fc1", kTimeFreqs, D);
  time_fc2_ = reg_.add_linear("time_enc.fc2", D, D);
  time_proj_ = reg_.add_linear("time_proj", D, 6 * D);
  action_enc_ = reg_.add_linear("action_enc", cfg.action_dim, D);
  for (int l = 0; l < cfg.n_layers; ++l) {
    reg_.begin_unit(str("blocks.", l));
    blocks_.add(add_wan_block(reg_, l, cfg));
  }
  reg_.begin_unit("head");
  head_unit_ = reg_.n_units() - 1;
  head_modulation_ = reg_.add("head.modulation", {2, D}, ParamInit::normal, false);
  head_proj_ = reg_.add_linear("head.proj", D, cfg.patch_dim_out());
  action_head_ = reg_.add_linear("action_head", D, cfg.action_dim);

  // Patch elements are flattened (t, h, w, c); the head predicts channels c < out_channels.
  const int n_pix = cfg.patch[0] * cfg.patch[1] * cfg.patch[2];
  for (int p = 0; p < n_pix; ++p)
    for (int c = 0; c < cfg.out_channels; ++c) out_to_in_.push_back(p * cfg.latent_channels + c);
}

std::vector<double> WanModel::loss_counts(const PackedBatch& batch) const {
  double noisy = 0, act = 0;
  for (int64_t t = 0; t < batch.n_tokens; ++t) {
    noisy += batch.kind[size_t(t)] == kNoisyVideo;
    act += batch.kind[size_t(t)] == kAction;
  }
  return {noisy * cfg_.patch_dim_out(), act * cfg_.action_dim};
}

void WanModel::plan_activations(ActivationPlan& plan, int64_t T, int64_t Tc, int /*B*/) {
  const int64_t D = cfg_.d_model, P = cfg_.patch_dim_in(), Po = cfg_.patch_dim_out(), A = cfg_.action_dim;
  Acts& a = a_;
  for (float** p : {&a.te1, &a.te1s, &a.temb, &a.stemb, &a.vemb, &a.aemb, &a.x, &a.hx, &a.hln, &a.hm, &a.dx,
                    &a.dstemb, &a.dtemb, &a.dte1s, &a.dte1, &a.dhx, &a.dhln, &a.dhm, &a.dvemb, &a.daemb, &a.work})
    *p = plan.floats(T * D);
  a.sin = plan.floats(T * kTimeFreqs);
  for (float** p : {&a.tp, &a.dtp}) *p = plan.floats(T * 6 * D);
  a.vin = plan.floats(T * P);
  for (float** p : {&a.ain, &a.ya, &a.dya}) *p = plan.floats(T * A);
  for (float** p : {&a.yv, &a.dyv}) *p = plan.floats(T * Po);
  for (float** p : {&a.hmean, &a.hrstd}) *p = plan.floats(T);
  for (float** p : {&a.hmod, &a.dhmod}) *p = plan.floats(T * 2 * D);
  for (float** p : {&a.t1, &a.t1g, &a.c, &a.dc, &a.dt1g, &a.dt1}) *p = plan.floats(Tc * D);
  blocks_.plan(plan, T, Tc, cfg_.recompute);
  std::vector<const BlockSpec*> specs;
  for (const BlockSpec& s : blocks_.specs()) specs.push_back(&s);
  plan_block_scratch(specs, T, Tc, plan, a.scratch);
}

// Time embedding and its shared projection, video and action tokens into x, text context into c.
void WanModel::encode(const ParamAccess& P, const PackedBatch& b) {
  Acts& a = a_;
  const int64_t T = b.n_tokens, Tc = b.n_context, D = cfg_.d_model;
  const int Pin = cfg_.patch_dim_in(), A = cfg_.action_dim;
  const int64_t Tv = int64_t(layout_.video.size()), Ta = int64_t(layout_.action.size());

  const int64_t Tu = int64_t(time_rows_.t.size());
  cpu::sinus_embedding(time_rows_.t.data(), a.sin, Tu, kTimeFreqs);
  cpu::linear_forward(a.sin, P.p(time_fc1_.weight), P.p(time_fc1_.bias), a.te1, Tu, kTimeFreqs, int(D));
  cpu::silu_forward(a.te1, a.te1s, Tu * D);
  cpu::linear_forward(a.te1s, P.p(time_fc2_.weight), P.p(time_fc2_.bias), a.temb, Tu, int(D), int(D));
  cpu::silu_forward(a.temb, a.stemb, Tu * D);
  cpu::linear_forward(a.stemb, P.p(time_proj_.weight), P.p(time_proj_.bias), a.tp, Tu, int(D), int(6 * D));

  // Patch-embed input: x0 for clean tokens, (1 − σ)·x0 + σ·ε for noisy ones.
  for (int64_t r = 0; r < Tv; ++r) {
    const float sigma = draws_.sigma[size_t(layout_.video[size_t(r)])];
    const float* x0 = &b.video_x0[size_t(r * Pin)];
    const float* eps = &draws_.video_noise[size_t(r * Pin)];
    for (int e = 0; e < Pin; ++e) a.vin[r * Pin + e] = (1.0f - sigma) * x0[e] + sigma * eps[e];
  }
  for (int64_t r = 0; r < Ta; ++r) {
    const float sigma = draws_.sigma[size_t(layout_.action[size_t(r)])];
    for (int e = 0; e < A; ++e)
      a.ain[r * A + e] = (1.0f - sigma) * b.act_x0[size_t(r * A + e)] + sigma * draws_.act_noise[size_t(r * A + e)];
  }
  cpu::linear_forward(a.vin, P.p(patch_embed_.weight), P.p(patch_embed_.bias), a.vemb, Tv, Pin, int(D));
  cpu::linear_forward(a.ain, P.p(action_enc_.weight), P.p(action_enc_.bias), a.aemb, Ta, A, int(D));
  zero(a.x, T * D);
  scatter_rows(a.vemb, layout_.video, D, a.x);
  scatter_rows(a.aemb, layout_.action, D, a.x);

  cpu::linear_forward(b.context.data(), P.p(text_fc1_.weight), P.p(text_fc1_.bias), a.t1, Tc, cfg_.d_ctx, int(D));
  cpu::gelu_tanh_forward(a.t1, a.t1g, Tc * D);
  cpu::linear_forward(a.t1g, P.p(text_fc2_.weight), P.p(text_fc2_.bias), a.c, Tc, int(D), int(D));
}

void WanModel::encode_backward(const ParamAccess& P, const PackedBatch& b) {
  Acts& a = a_;
  const int64_t Tc = b.n_context, D = cfg_.d_model;
  const int64_t Tv = int64_t(layout_.video.size()), Ta = int64_t(layout_.action.size());

  zero(a.dt1g, Tc * D), zero(a.dt1, Tc * D);
  cpu::linear_backward(a.t1g, P.p(text_fc2_.weight), a.dc, a.dt1g, P.g(text_fc2_.weight), P.g(text_fc2_.bias), Tc,
                       int(D), int(D));
  cpu::gelu_tanh_backward(a.t1, a.dt1g, a.dt1, Tc * D);
  cpu::linear_backward(b.context.data(), P.p(text_fc1_.weight), a.dt1, nullptr, P.g(text_fc1_.weight),
                       P.g(text_fc1_.bias), Tc, cfg_.d_ctx, int(D));

  gather_rows(a.dx, layout_.video, D, a.dvemb);
  gather_rows(a.dx, layout_.action, D, a.daemb);
  cpu::linear_backward(a.vin, P.p(patch_embed_.weight), a.dvemb, nullptr, P.g(patch_embed_.weight),
                       P.g(patch_embed_.bias), Tv, cfg_.patch_dim_in(), int(D));
  cpu::linear_backward(a.ain, P.p(action_enc_.weight), a.daemb, nullptr, P.g(action_enc_.weight),
                       P.g(action_enc_.bias), Ta, cfg_.action_dim, int(D));

  const int64_t Tu = int64_t(time_rows_.t.size());
  zero(a.dstemb, Tu * D), zero(a.dte1s, Tu * D), zero(a.dte1, Tu * D);
  cpu::linear_backward(a.stemb, P.p(time_proj_.weight), a.dtp, a.dstemb, P.g(time_proj_.weight),
                       P.g(time_proj_.bias), Tu, int(D), int(6 * D));
  cpu::silu_backward(a.temb, a.dstemb, a.dtemb, Tu * D);  // dtemb already holds the head's share
  cpu::linear_backward(a.te1s, P.p(time_fc2_.weight), a.dtemb, a.dte1s, P.g(time_fc2_.weight), P.g(time_fc2_.bias),
                       Tu, int(D), int(D));
  cpu::silu_backward(a.te1, a.dte1s, a.dte1, Tu * D);
  cpu::linear_backward(a.sin, P.p(time_fc1_.weight), a.dte1, nullptr, P.g(time_fc1_.weight), P.g(time_fc1_.bias),
                       Tu, kTimeFreqs, int(D));
}

// Head over the noisy video and action tokens: sh/sc = head.modulation + temb, then head.proj
// (video) or action_head (actions) on LN(x)·(1 + sc) + sh, and the two flow-matching losses.
double WanModel::head(const ParamAccess& P, const PackedBatch& b, const std::vector<double>& den, bool backward) {
  Acts& a = a_;
  const int64_t D = cfg_.d_model;
  const int Pin = cfg_.patch_dim_in(), Po = cfg_.patch_dim_out(), A = cfg_.action_dim;
  const int64_t Tn = int64_t(layout_.noisy.size()), Ta = int64_t(layout_.action.size()), Th = Tn + Ta;
  head_rows_ = layout_.noisy;
  head_rows_.insert(head_rows_.end(), layout_.action.begin(), layout_.action.end());

  gather_rows(a.x, head_rows_, D, a.hx);
  cpu::layernorm_forward(a.hx, nullptr, nullptr, a.hln, a.hmean, a.hrstd, Th, int(D));
  const float* table = P.p(head_modulation_);
  for (int64_t r = 0; r < Th; ++r) {
    const float* temb = a.temb + int64_t(time_rows_.row[size_t(head_rows_[size_t(r)])]) * D;
    for (int64_t c = 0; c < 2 * D; ++c) a.hmod[r * 2 * D + c] = table[c] + temb[c % D];
  }
  cpu::modulate_forward(a.hln, a.hmod + D, a.hmod, 2 * D, a.hm, Th, int(D));
  cpu::linear_forward(a.hm, P.p(head_proj_.weight), P.p(head_proj_.bias), a.yv, Tn, int(D), Po);
  cpu::linear_forward(a.hm + Tn * D, P.p(action_head_.weight), P.p(action_head_.bias), a.ya, Ta, int(D), A);

  double video_loss = 0, action_loss = 0;
  for (int64_t r = 0; r < Tn; ++r) {
    const int64_t row = layout_.video_row[size_t(head_rows_[size_t(r)])];
    const float* x0 = &b.video_x0[size_t(row * Pin)];
    const float* eps = &draws_.video_noise[size_t(row * Pin)];
    for (int e = 0; e < Po; ++e) {
      const int i = out_to_in_[size_t(e)];
      const float diff = a.yv[r * Po + e] - (eps[i] - x0[i]);
      video_loss += double(diff) * diff;
      if (backward) a.dyv[r * Po + e] = float(2.0 * diff / den[0]);
    }
  }
  const double lambda = cfg_.action_loss_weight;
  for (int64_t r = 0; r < Ta; ++r)
    for (int e = 0; e < A; ++e) {
      const float diff = a.ya[r * A + e] - (draws_.act_noise[size_t(r * A + e)] - b.act_x0[size_t(r * A + e)]);
      action_loss += double(diff) * diff;
      if (backward) a.dya[r * A + e] = float(2.0 * lambda * diff / den[1]);
    }
  return video_loss / den[0] + (Ta ? lambda * action_loss / den[1] : 0.0);
}

void WanModel::head_backward(const ParamAccess& P) {
  Acts& a = a_;
  const int64_t D = cfg_.d_model;
  const int64_t Tn = int64_t(layout_.noisy.size()), Ta = int64_t(layout_.action.size()), Th = Tn + Ta;
  zero(a.dhm, Th * D), zero(a.dhln, Th * D), zero(a.dhmod, Th * 2 * D), zero(a.dhx, Th * D);
  cpu::linear_backward(a.hm, P.p(head_proj_.weight), a.dyv, a.dhm, P.g(head_proj_.weight), P.g(head_proj_.bias), Tn,
                       int(D), cfg_.patch_dim_out());
  cpu::linear_backward(a.hm + Tn * D, P.p(action_head_.weight), a.dya, a.dhm + Tn * D, P.g(action_head_.weight),
                       P.g(action_head_.bias), Ta, int(D), cfg_.action_dim);
  cpu::modulate_backward(a.hln, a.hmod + D, 2 * D, a.dhm, a.dhln, a.dhmod + D, a.dhmod, Th, int(D));
  if (float* dtable = P.g(head_modulation_))
    cpu::accumulate_column_sums(Th, int(2 * D), dtable, [&](int64_t r, int c) { return double(a.dhmod[r * 2 * D + c]); });
  for (int64_t r = 0; r < Th; ++r) {
    float* dtemb = a.dtemb + int64_t(time_rows_.row[size_t(head_rows_[size_t(r)])]) * D;
    for (int64_t c = 0; c < D; ++c) dtemb[c] += a.dhmod[r * 2 * D + c] + a.dhmod[r * 2 * D + D + c];
  }
  cpu::layernorm_backward(a.hx, nullptr, a.hmean, a.hrstd, a.dhln, a.dhx, nullptr, nullptr, Th, int(D));
}

double WanModel::run(ParamAccess& P, bool backward, const PackedBatch& b, const std::vector<double>& den) {
  Acts& a = a_;
  const int64_t T = b.n_tokens, Tc = b.n_context, D = cfg_.d_model;
  EMB_CHECK(den[0] > 0, "wan loss: the noisy-video denominator is ", den[0], " (no noisy video token in the global batch)");
  EMB_CHECK(layout_.action.empty() || den[1] > 0, "wan loss: the action denominator is ", den[1]);

  BlockIO io;
  io.T = T, io.Tc = Tc;
  io.cond = a.tp, io.dcond = a.dtp;
  io.n_cond = int64_t(time_rows_.t.size()), io.cond_row = time_rows_.row.data();
  io.context = a.c, io.dcontext = a.dc;
  io.self_index = {cpu::AttnMask::block_causal, b.seq.data(), b.blk.data(), b.grp.data(), b.seq.data(), b.blk.data(),
                   b.grp.data()};
  io.cross_index = {cpu::AttnMask::cross, b.seq.data(), nullptr, nullptr, b.cseq.data(), nullptr, nullptr};
  io.pos = b.pos.data();

  P.enter_forward(0);
  encode(P, b);
  blocks_.forward(P, io, a.x);
  P.enter_forward(head_unit_);
  const double loss = head(P, b, den, backward);
  if (!backward) return loss;

  const int64_t Tu = int64_t(time_rows_.t.size());
  zero(a.dtemb, Tu * D);
  P.enter_backward(head_unit_);
  head_backward(P);
  P.leave_backward(head_unit_);
  zero(a.dx, T * D), zero(a.dtp, Tu * 6 * D), zero(a.dc, Tc * D);
  scatter_add_rows(a.dhx, head_rows_, D, a.dx);
  blocks_.backward(P, io, a.scratch, a.dx, a.work);
  P.enter_backward(0);
  encode_backward(P, b);
  P.leave_backward(0);
  return loss;
}

}  // namespace emb
