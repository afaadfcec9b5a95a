// Family gr00t (MODEL.md): the GR00T-N1.5 flow-matching action head. Units: 0 = encoders
// (vlln, state/action encoders, future tokens, pos_emb, time_enc), then one unit per
// vl_block (the trunk's context blocks), one per DiT block, and last the output head
// (proj_out_1/2, action_dec).
#include <cstring>
#include <memory>

#include "core/error.hpp"
#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/embedding.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/modulate.hpp"
#include "kernels/cpu/norm.hpp"
#include "model/activation_plan.hpp"
#include "model/model.hpp"
#include "model/rows.hpp"

namespace emb {
namespace {

class Gr00tModel final : public Model {
  // Parameters.
  NormRef vlln_;
  LinearRef state_fc1_, state_fc2_, act_fc1_, act_fc2_, act_fc3_;
  int future_tokens_ = -1, pos_emb_ = -1;
  LinearRef proj_out_1_, proj_out_2_, dec_fc1_, dec_fc2_;

  std::vector<int32_t> action_time_rows_;  // time row of each action token

  // Activations (arena) of the planned shape; d* are their gradients.
  struct Acts {
    float *st1 = nullptr, *st1r = nullptr, *st2 = nullptr;
    float *ax = nullptr, *a_tq = nullptr, *a_sin = nullptr, *ae1 = nullptr, *acat = nullptr, *ae2 = nullptr,
          *ae2s = nullptr, *ae3 = nullptr;
    int32_t *a_emb = nullptr;
    float *vl_mean = nullptr, *vl_rstd = nullptr;
    float *hx = nullptr, *hmean = nullptr, *hrstd = nullptr, *hln = nullptr, *hmod_rows = nullptr, *hmod = nullptr,
          *hm = nullptr, *hy = nullptr, *d1 = nullptr, *d1r = nullptr, *v = nullptr;
    float *dv = nullptr, *dd1r = nullptr, *dd1 = nullptr, *dhy = nullptr, *dhm = nullptr, *dhln = nullptr,
          *dhmod_rows = nullptr, *dhmod = nullptr, *dhx = nullptr;
    float *dae3 = nullptr, *dae2s = nullptr, *dae2 = nullptr, *dacat = nullptr, *dae1 = nullptr;
    float *dst2 = nullptr, *dst1r = nullptr, *dst1 = nullptr;
  } a_;

 public:
  explicit Gr00tModel(const ModelConfig& cfg) : Model(cfg) {
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
    time_enc_.add_params(reg_, D);
    for (int l = 0; l < cfg.n_layers_vl; ++l) {
      reg_.begin_unit(str("vl_blocks.", l));
      trunk_.context_blocks.add(add_vl_block(reg_, l, cfg));
    }
    for (int l = 0; l < cfg.n_layers; ++l) {
      reg_.begin_unit(str("blocks.", l));
      trunk_.blocks.add(add_gr00t_block(reg_, l, cfg));
    }
    reg_.begin_unit("head");
    proj_out_1_ = reg_.add_linear("proj_out_1", D, 2 * D);
    proj_out_2_ = reg_.add_linear("proj_out_2", D, cfg.d_out);
    dec_fc1_ = reg_.add_linear_emb("action_dec.fc1", E, cfg.d_out, cfg.d_hidden_enc);
    dec_fc2_ = reg_.add_linear_emb("action_dec.fc2", E, cfg.d_hidden_enc, cfg.action_dim);
  }

  std::vector<double> loss_counts(const PackedBatch& batch) const override {
    double n = 0;
    for (float m : batch.action_mask) n += m;
    return {n};
  }

 private:
  void plan_activations(ActivationPlan& plan, int64_t T, int64_t Tc, int B) override {
    const int64_t D = cfg_.d_model, Dh = cfg_.d_hidden_enc, A = cfg_.action_dim;
    const int64_t Ta = int64_t(B) * cfg_.horizon, Dout = cfg_.d_out;
    time_enc_.plan(plan, T);
    trunk_.plan(plan, T, Tc, D, cfg_.d_ctx, cfg_.recompute);
    trunk_.condition_on(time_enc_.stemb, time_enc_.dstemb, D);  // ada2 projects silu(temb) per block
    Acts& a = a_;
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
    for (float** p : {&a.vl_mean, &a.vl_rstd}) *p = plan.floats(Tc);
  }

  // State, action and future tokens into x, and the vlln-normalised context into c.
  void encode(const ParamAccess& P, const PackedBatch& b) override {
    Acts& a = a_;
    const int64_t T = b.n_tokens, Tc = b.n_context, D = cfg_.d_model;
    const int B = b.n_samples, E = cfg_.n_embodiments, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc;
    const int64_t Ta = int64_t(layout_.action.size());

    cpu::linear_emb_forward(b.state.data(), P.p(state_fc1_.weight), P.p(state_fc1_.bias), b.emb_id.data(), a.st1,
                            B, cfg_.state_dim, Dh, E);
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
    cpu::linear_emb_forward(a.acat, P.p(act_fc2_.weight), P.p(act_fc2_.bias), a.a_emb, a.ae2, Ta, int(2 * D),
                            int(D), E);
    cpu::silu_forward(a.ae2, a.ae2s, Ta * D);
    cpu::linear_emb_forward(a.ae2s, P.p(act_fc3_.weight), P.p(act_fc3_.bias), a.a_emb, a.ae3, Ta, int(D), int(D),
                            E);

    zero(trunk_.x, T * D);
    const float* pos_emb = P.p(pos_emb_);
    for (int64_t r = 0; r < Ta; ++r) {
      float* x = trunk_.x + int64_t(layout_.action[size_t(r)]) * D;
      const float* pe = pos_emb + int64_t(layout_.kind_index[size_t(layout_.action[size_t(r)])]) * D;
      for (int64_t c = 0; c < D; ++c) x[c] = a.ae3[r * D + c] + pe[c];
    }
    for (int32_t t : layout_.state)
      std::memcpy(trunk_.x + t * D, a.st2 + int64_t(b.seq[size_t(t)]) * D, size_t(D) * sizeof(float));
    const float* future = P.p(future_tokens_);
    for (int32_t t : layout_.future)
      std::memcpy(trunk_.x + t * D, future + int64_t(layout_.kind_index[size_t(t)]) * D, size_t(D) * sizeof(float));

    cpu::layernorm_forward(b.context.data(), P.p(vlln_.weight), P.p(vlln_.bias), trunk_.c, a.vl_mean, a.vl_rstd,
                           Tc, cfg_.d_ctx);
  }

  // Output head on the action tokens and the masked flow-matching loss; with backward, also
  // the loss gradient dv.
  double head(const ParamAccess& P, const PackedBatch& b, const std::vector<double>& denominators,
              bool backward) override {
    const double denominator = denominators[0];
    EMB_CHECK(denominator > 0, "gr00t loss: the action-mask denominator is ", denominator,
              " (no unmasked action element in the global batch)");
    Acts& a = a_;
    const int64_t D = cfg_.d_model, Ta = int64_t(layout_.action.size());
    const int E = cfg_.n_embodiments, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc, Dout = cfg_.d_out;
    action_time_rows_.clear();
    for (int32_t t : layout_.action) action_time_rows_.push_back(time_rows_.row[size_t(t)]);
    gather_rows(trunk_.x, layout_.action, D, a.hx);
    cpu::layernorm_forward(a.hx, nullptr, nullptr, a.hln, a.hmean, a.hrstd, Ta, int(D));
    cpu::linear_forward(time_enc_.stemb, P.p(proj_out_1_.weight), P.p(proj_out_1_.bias), a.hmod_rows,
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

  const float* action_output() const override { return a_.v; }

  void head_backward(const ParamAccess& P) override {
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
    cpu::linear_backward(a.hm, P.p(proj_out_2_.weight), a.dhy, a.dhm, P.g(proj_out_2_.weight),
                         P.g(proj_out_2_.bias), Ta, int(D), Dout);
    cpu::modulate_backward(a.hln, a.hmod + D, 2 * D, a.dhm, a.dhln, a.dhmod + D, a.dhmod, Ta, int(D));
    const int64_t Tu = int64_t(time_rows_.t.size());
    zero(a.dhmod_rows, Tu * 2 * D);
    scatter_add_rows(a.dhmod, action_time_rows_, 2 * D, a.dhmod_rows);
    cpu::linear_backward(time_enc_.stemb, P.p(proj_out_1_.weight), a.dhmod_rows, time_enc_.dstemb,
                         P.g(proj_out_1_.weight), P.g(proj_out_1_.bias), Tu, int(D), int(2 * D));
    cpu::layernorm_backward(a.hx, nullptr, a.hmean, a.hrstd, a.dhln, a.dhx, nullptr, nullptr, Ta, int(D));
    scatter_add_rows(a.dhx, layout_.action, D, trunk_.dx);
  }

  void encode_backward(const ParamAccess& P, const PackedBatch& b) override {
    Acts& a = a_;
    const int64_t Tc = b.n_context, D = cfg_.d_model;
    const int B = b.n_samples, E = cfg_.n_embodiments, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc;
    const int64_t Ta = int64_t(layout_.action.size());

    cpu::layernorm_backward(b.context.data(), P.p(vlln_.weight), a.vl_mean, a.vl_rstd, trunk_.dc, nullptr,
                            P.g(vlln_.weight), P.g(vlln_.bias), Tc, cfg_.d_ctx);

    gather_rows(trunk_.dx, layout_.action, D, a.dae3);
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
        for (int64_t c = 0; c < D; ++c) d[c] += trunk_.dx[t * D + c];
      }

    zero(a.dst2, int64_t(B) * D), zero(a.dst1r, int64_t(B) * Dh), zero(a.dst1, int64_t(B) * Dh);
    for (int32_t t : layout_.state)
      std::memcpy(a.dst2 + int64_t(b.seq[size_t(t)]) * D, trunk_.dx + t * D, size_t(D) * sizeof(float));
    cpu::linear_emb_backward(a.st1r, P.p(state_fc2_.weight), b.emb_id.data(), a.dst2, a.dst1r,
                             P.g(state_fc2_.weight), P.g(state_fc2_.bias), B, Dh, int(D), E);
    cpu::relu_backward(a.st1, a.dst1r, a.dst1, int64_t(B) * Dh);
    cpu::linear_emb_backward(b.state.data(), P.p(state_fc1_.weight), b.emb_id.data(), a.dst1, nullptr,
                             P.g(state_fc1_.weight), P.g(state_fc1_.bias), B, cfg_.state_dim, Dh, E);
  }
};

}  // namespace

std::unique_ptr<Model> make_gr00t_model(const ModelConfig& cfg) { return std::make_unique<Gr00tModel>(cfg); }

}  // namespace emb
