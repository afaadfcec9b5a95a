// Family gr00t (MODEL.md): the GR00T-N1.5 flow-matching action head as upstream computes it
// (Isaac-GR00T 4af2b622, UPSTREAM.md). Units: with model.tune_visual first the vision tower's
// (context_source.hpp), then encoders (vlln, state/action encoders, future tokens, pos_emb,
// time_enc), one unit per vl_block (the trunk's context blocks), one per
// DiT block, and last the output head (proj_out_1/2, action_dec).
#include <memory>

#include "core/error.hpp"
#include "model/action_encoder.hpp"
#include "model/activation_plan.hpp"
#include "model/model.hpp"

namespace emb {
namespace {

// The time encoder's sinusoid is diffusers' Timesteps(256, flip_sin_to_cos=True,
// downscale_freq_shift=1): [cos, sin] over k/127 (the action encoder's: action_encoder.hpp).
constexpr SinusConfig kTimeSinusoid{true, 1};

class Gr00tModel final : public Model {
  // Parameters.
  NormRef vlln_;
  LinearRef state_fc1_, state_fc2_;
  ActionEncoder action_enc_;
  int future_tokens_ = -1, pos_emb_ = -1;
  LinearRef proj_out_1_, proj_out_2_, dec_fc1_, dec_fc2_;

  // Activations (arena) of the planned shape; d* are their gradients.
  struct Acts {
    float *st1 = nullptr, *st1r = nullptr, *st2 = nullptr;
    float *ax = nullptr, *a_tq = nullptr;
    float *vl_mean = nullptr, *vl_rstd = nullptr, *dcontext = nullptr;
    float *hx = nullptr, *hmean = nullptr, *hrstd = nullptr, *hln = nullptr, *hmod_rows = nullptr, *hmod = nullptr,
          *hm = nullptr, *hy = nullptr, *d1 = nullptr, *d1r = nullptr, *v = nullptr;
    float *dv = nullptr, *dd1r = nullptr, *dhy = nullptr, *dhm = nullptr, *dhmod_rows = nullptr, *dhmod = nullptr,
          *dhx = nullptr;
    float *dst2 = nullptr, *dst1r = nullptr;
  } a_;

 public:
  Gr00tModel(const ModelConfig& cfg, Ops* ops) : Model(cfg, ops) {
    const int D = cfg.d_model, E = cfg.n_embodiments;
    for (const TrainedContextTensor& t : cfg.trained_context) {  // model.tune_visual (context_source.hpp)
      if (reg_.n_units() == 0 || reg_.unit(reg_.n_units() - 1).name != t.unit) reg_.begin_unit(t.unit);
      const int i = reg_.add(t.name, {t.rows, t.cols}, ParamInit::loaded, t.decay);
      if (trained_context_.first_tensor < 0) trained_context_ = {i, reg_[i].unit};
    }
    encoders_unit_ = reg_.n_units();
    reg_.begin_unit("encoders");
    vlln_ = reg_.add_layernorm("vlln", cfg.d_ctx);
    state_fc1_ = reg_.add_linear_emb("state_enc.fc1", E, cfg.state_dim, cfg.d_hidden_enc);
    state_fc2_ = reg_.add_linear_emb("state_enc.fc2", E, cfg.d_hidden_enc, D);
    action_enc_.add_params(reg_, E, cfg.action_dim, D);
    future_tokens_ = reg_.add("future_tokens", {cfg.n_future, D}, ParamInit::normal, false);
    // Upstream's position_embedding: max_seq_len rows, of which the action tokens use 0 .. Hz − 1.
    pos_emb_ = reg_.add("pos_emb", {cfg.max_seq_len, D}, ParamInit::normal, false);
    time_enc_.add_params(reg_, D, kTimeSinusoid);
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
  void plan_activations(ActivationPlan& plan, const ActivationRows& rows) override {
    const int64_t D = cfg_.d_model, Dh = cfg_.d_hidden_enc, A = cfg_.action_dim;
    const int64_t B = rows.samples, Tc = rows.context, Tu = rows.time_rows, Ta = rows.actions, Dout = cfg_.d_out;
    time_enc_.plan(plan, Tu);
    trunk_.plan(plan, rows, 0, D, cfg_.d_ctx, D, cfg_.recompute);
    trunk_.condition_on(time_enc_.stemb, time_enc_.dstemb);  // ada2 projects silu(temb) per block
    Acts& a = a_;
    for (float** p : {&a.st1, &a.st1r, &a.dst1r}) *p = plan.floats(B * Dh);
    for (float** p : {&a.st2, &a.dst2}) *p = plan.floats(B * D);
    for (float** p : {&a.ax, &a.v, &a.dv}) *p = plan.floats(Ta * A);
    a.a_tq = plan.floats(Ta);
    action_enc_.plan(plan, Ta);
    for (float** p : {&a.hx, &a.hln, &a.hm, &a.dhm, &a.dhx}) *p = plan.floats(Ta * D);
    for (float** p : {&a.hmod, &a.dhmod}) *p = plan.floats(Ta * 2 * D);
    for (float** p : {&a.hmod_rows, &a.dhmod_rows}) *p = plan.floats(Tu * 2 * D);
    for (float** p : {&a.hmean, &a.hrstd}) *p = plan.floats(Ta);
    for (float** p : {&a.hy, &a.dhy}) *p = plan.floats(Ta * Dout);
    for (float** p : {&a.d1, &a.d1r, &a.dd1r}) *p = plan.floats(Ta * Dh);
    for (float** p : {&a.vl_mean, &a.vl_rstd}) *p = plan.floats(Tc);
    if (!cfg_.trained_context.empty()) a.dcontext = plan.floats(Tc * cfg_.d_ctx);  // the context encoder's gradient
  }

  // State, action and future tokens into x, and the vlln-normalised context into c.
  void encode(const ParamAccess& P, const PackedBatch& batch) override {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t T = batch.n_tokens, Tc = batch.n_context, D = cfg_.d_model, Ta = d.action.n;
    const int B = batch.n_samples, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc;
    const View ae3 = view(action_enc_.out, Ta, D), x = view(trunk_.x, T, D);

    ops.linear_emb_forward(d.state, W(P, state_fc1_), b(P, state_fc1_), d.sample_emb, Activation::relu,
                           view(a.st1, B, Dh), view(a.st1r, B, Dh));
    ops.linear_emb_forward(view(a.st1r, B, Dh), W(P, state_fc2_), b(P, state_fc2_), d.sample_emb, Activation::none,
                           View{}, view(a.st2, B, D));

    // Noisy actions x = (1 − τ)ε + τ·a, one row per action token; its timestep bucket trunc(1000τ).
    ops.flow_interpolate(d.noise, d.actions, d.action_target, d.tau, d.action_sample, view(a.ax, Ta, A));
    ops.copy_rows(d.tq, d.action_sample, view(a.a_tq, Ta, 1), RowIndex{});
    action_enc_.forward(ops, P, view(a.ax, Ta, A), view(a.a_tq, Ta, 1), d.action_emb);

    ops.zero(x);
    ops.add_rows(P.pv(pos_emb_), d.action_kind, ae3, RowIndex{});  // + pos_emb[h]
    ops.copy_rows(ae3, RowIndex{}, x, d.action);
    ops.copy_rows(view(a.st2, B, D), d.state_sample, x, d.state_tokens);
    ops.copy_rows(P.pv(future_tokens_), d.future_kind, x, d.future);

    ops.layernorm_forward(d.context, P.pv(vlln_.weight), P.pv(vlln_.bias), view(trunk_.c, Tc, cfg_.d_ctx),
                          view(a.vl_mean, Tc, 1), view(a.vl_rstd, Tc, 1), kGr00tNormEps);
  }

  // Output head on the action tokens and the masked flow-matching loss; with backward, also
  // the loss gradient dv.
  LossTerms head(const ParamAccess& P, const PackedBatch& batch, const std::vector<double>& denominators,
                 bool backward, double* sums) override {
    const double denominator = denominators[0];
    EMB_CHECK(denominator > 0, "gr00t loss: the action-mask denominator is ", denominator,
              " (no unmasked action element in the global batch)");
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Ta = d.action.n, Tu = d.time_t.rows;
    const int A = cfg_.action_dim, Dh = cfg_.d_hidden_enc, Dout = cfg_.d_out;
    const View hx = view(a.hx, Ta, D), hmod = view(a.hmod, Ta, 2 * D);  // chunks: shift, scale
    ops.copy_rows(view(trunk_.x, batch.n_tokens, D), d.action, hx, RowIndex{});
    ops.linear_forward(view(time_enc_.stemb, Tu, D), W(P, proj_out_1_), b(P, proj_out_1_), Activation::none, View{},
                       view(a.hmod_rows, Tu, 2 * D));
    ops.copy_rows(view(a.hmod_rows, Tu, 2 * D), d.action_time, hmod, RowIndex{});
    ops.norm_modulate_forward(hx, hmod.cols_range(D, D), hmod.cols_range(0, D), view(a.hln, Ta, D),
                              view(a.hm, Ta, D), view(a.hmean, Ta, 1), view(a.hrstd, Ta, 1), kGr00tNormOutEps);
    ops.linear_forward(view(a.hm, Ta, D), W(P, proj_out_2_), b(P, proj_out_2_), Activation::none, View{},
                       view(a.hy, Ta, Dout));
    ops.linear_emb_forward(view(a.hy, Ta, Dout), W(P, dec_fc1_), b(P, dec_fc1_), d.action_emb, Activation::relu,
                           view(a.d1, Ta, Dh), view(a.d1r, Ta, Dh));
    ops.linear_emb_forward(view(a.d1r, Ta, Dh), W(P, dec_fc2_), b(P, dec_fc2_), d.action_emb, Activation::none,
                           View{}, view(a.v, Ta, A));
    // v is the velocity a − ε, of the action row s·Hz + h.
    ops.mse_loss(view(a.v, Ta, A), d.actions, d.noise, d.action_mask, d.action_target, RowIndex{},
                 LossConfig{denominator, 1.0}, backward ? view(a.dv, Ta, A) : View{}, sums);
    LossTerms terms;
    terms.den0 = denominator;
    return terms;
  }

  const float* action_output() const override { return a_.v; }

  void head_backward(const ParamAccess& P) override {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Ta = d.action.n, Tu = d.time_t.rows;
    const int A = cfg_.action_dim, Dh = cfg_.d_hidden_enc, Dout = cfg_.d_out;
    const View dd1r = view(a.dd1r, Ta, Dh), dhy = view(a.dhy, Ta, Dout), dhm = view(a.dhm, Ta, D);
    const View dhmod = view(a.dhmod, Ta, 2 * D), dhx = view(a.dhx, Ta, D), hmod = view(a.hmod, Ta, 2 * D);
    const View dhmod_rows = view(a.dhmod_rows, Tu, 2 * D);
    ops.zero(dd1r), ops.zero(dhy), ops.zero(dhm), ops.zero(dhmod), ops.zero(dhx);
    ops.linear_emb_backward(view(a.d1r, Ta, Dh), W(P, dec_fc2_), d.action_emb, Activation::none, View{},
                            view(a.dv, Ta, A), dd1r, dW(P, dec_fc2_), db(P, dec_fc2_));
    ops.linear_emb_backward(view(a.hy, Ta, Dout), W(P, dec_fc1_), d.action_emb, Activation::relu, view(a.d1, Ta, Dh),
                            dd1r, dhy, dW(P, dec_fc1_), db(P, dec_fc1_));
    ops.linear_backward(view(a.hm, Ta, D), W(P, proj_out_2_), Activation::none, View{}, dhy, dhm,
                        dW(P, proj_out_2_), db(P, proj_out_2_));
    ops.norm_modulate_backward(view(a.hx, Ta, D), view(a.hln, Ta, D), hmod.cols_range(D, D), view(a.hmean, Ta, 1),
                               view(a.hrstd, Ta, 1), dhm, dhx, dhmod.cols_range(D, D), dhmod.cols_range(0, D));
    ops.zero(dhmod_rows);
    ops.add_rows(dhmod, RowIndex{}, dhmod_rows, d.action_time);
    ops.linear_backward(view(time_enc_.stemb, Tu, D), W(P, proj_out_1_), Activation::none, View{}, dhmod_rows,
                        view(time_enc_.dstemb, Tu, D), dW(P, proj_out_1_), db(P, proj_out_1_));
    ops.add_rows(dhx, RowIndex{}, view(trunk_.dx, int64_t(layout_.kind_index.size()), D), d.action);
  }

  void encode_backward(const ParamAccess& P, const PackedBatch& batch) override {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t T = batch.n_tokens, Tc = batch.n_context, D = cfg_.d_model, Ta = d.action.n;
    const int B = batch.n_samples, A = cfg_.action_dim, Dh = cfg_.d_hidden_enc;
    const View dx = view(trunk_.dx, T, D), dae3 = view(action_enc_.dout, Ta, D);
    const View dst2 = view(a.dst2, B, D), dst1r = view(a.dst1r, B, Dh);

    const View dcontext = context_source_ ? view(a.dcontext, Tc, cfg_.d_ctx) : View{};
    if (context_source_) ops.zero(dcontext);
    ops.layernorm_backward(d.context, P.pv(vlln_.weight), view(a.vl_mean, Tc, 1), view(a.vl_rstd, Tc, 1),
                           view(trunk_.dc, Tc, cfg_.d_ctx), dcontext, P.gv(vlln_.weight), P.gv(vlln_.bias));
    context_gradient_ = dcontext;  // the context source's backward follows this unit's (Model::run)

    ops.copy_rows(dx, d.action, dae3, RowIndex{});
    const View dpos = P.gv(pos_emb_);
    if (!dpos.absent()) ops.add_rows(dae3, RowIndex{}, dpos, d.action_kind);
    action_enc_.backward(ops, P, view(a.ax, Ta, A), d.action_emb);

    const View dfuture = P.gv(future_tokens_);
    if (!dfuture.absent()) ops.add_rows(dx, d.future, dfuture, d.future_kind);

    ops.zero(dst2), ops.zero(dst1r);
    ops.copy_rows(dx, d.state_tokens, dst2, d.state_sample);
    ops.linear_emb_backward(view(a.st1r, B, Dh), W(P, state_fc2_), d.sample_emb, Activation::none, View{}, dst2,
                            dst1r, dW(P, state_fc2_), db(P, state_fc2_));
    ops.linear_emb_backward(d.state, W(P, state_fc1_), d.sample_emb, Activation::relu, view(a.st1, B, Dh), dst1r,
                            View{}, dW(P, state_fc1_), db(P, state_fc1_));
  }
};

}  // namespace

std::unique_ptr<Model> make_gr00t_model(const ModelConfig& cfg, Ops* ops) {
  return std::make_unique<Gr00tModel>(cfg, ops);
}

}  // namespace emb
