// Family wan (MODEL.md): the DreamZero world-action model on the Wan video DiT. Units:
// 0 = encoders (patch_embed, text_emb, time_enc, the shared time_proj, action_enc), one unit
// per DiT block, last the head (head.modulation, head.proj, action_head).
#include <memory>

#include "core/error.hpp"
#include "model/activation_plan.hpp"
#include "model/model.hpp"

namespace emb {
namespace {

class WanModel final : public Model {
  // Parameters.
  LinearRef patch_embed_, text_fc1_, text_fc2_, time_proj_, action_enc_;
  int head_modulation_ = -1;
  LinearRef head_proj_, action_head_;

  // Activations (arena) of the planned shape; d* are their gradients.
  struct Acts {
    float *tp = nullptr, *vin = nullptr, *vemb = nullptr, *ain = nullptr, *aemb = nullptr;
    float *t1 = nullptr, *t1g = nullptr;
    float *hx = nullptr, *hmean = nullptr, *hrstd = nullptr, *hln = nullptr, *hmod = nullptr, *hm = nullptr;
    float *yv = nullptr, *ya = nullptr;
    float *dtp = nullptr, *dt1g = nullptr, *dhx = nullptr, *dhm = nullptr;
    float *dhmod = nullptr, *dhsum = nullptr, *dyv = nullptr, *dya = nullptr, *dvemb = nullptr, *daemb = nullptr;
  } a_;

 public:
  WanModel(const ModelConfig& cfg, Ops* ops) : Model(cfg, ops) {
    const int D = cfg.d_model;
    reg_.begin_unit("encoders");
    patch_embed_ = reg_.add_linear("patch_embed", cfg.patch_dim_in(), D);
    text_fc1_ = reg_.add_linear("text_emb.fc1", cfg.d_ctx, D);
    text_fc2_ = reg_.add_linear("text_emb.fc2", D, D);
    time_enc_.add_params(reg_, D, SinusConfig{true, 0});  // Wan's sinusoidal_embedding_1d
    time_proj_ = reg_.add_linear("time_proj", D, 6 * D);
    action_enc_ = reg_.add_linear("action_enc", cfg.action_dim, D);
    for (int l = 0; l < cfg.n_layers; ++l) {
      reg_.begin_unit(str("blocks.", l));
      trunk_.blocks.add(add_wan_block(reg_, l, cfg));
    }
    reg_.begin_unit("head");
    head_modulation_ = reg_.add("head.modulation", {2, D}, ParamInit::normal, false);
    head_proj_ = reg_.add_linear("head.proj", D, cfg.patch_dim_out());
    action_head_ = reg_.add_linear("action_head", D, cfg.action_dim);
  }

  std::vector<double> loss_counts(const PackedBatch& batch) const override {
    double noisy = 0, act = 0;
    for (int64_t t = 0; t < batch.n_tokens; ++t) {
      noisy += batch.kind[size_t(t)] == kNoisyVideo;
      act += batch.kind[size_t(t)] == kAction;
    }
    return {noisy * cfg_.patch_dim_out(), act * cfg_.action_dim};
  }

 private:
  void plan_activations(ActivationPlan& plan, int64_t T, int64_t Tc, int /*B*/) override {
    const int64_t D = cfg_.d_model, P = cfg_.patch_dim_in(), Po = cfg_.patch_dim_out(), A = cfg_.action_dim;
    time_enc_.plan(plan, T);
    trunk_.plan(plan, T, Tc, D, D, 6 * D, cfg_.recompute);
    Acts& a = a_;
    for (float** p : {&a.tp, &a.dtp}) *p = plan.floats(T * 6 * D);
    trunk_.condition_on(a.tp, a.dtp);  // ada6 adds each block's modulation to silu(temb)·time_proj
    for (float** p : {&a.vemb, &a.aemb, &a.hx, &a.hln, &a.hm, &a.dhx, &a.dhm, &a.dhsum, &a.dvemb, &a.daemb})
      *p = plan.floats(T * D);
    a.vin = plan.floats(T * P);
    for (float** p : {&a.ain, &a.ya, &a.dya}) *p = plan.floats(T * A);
    for (float** p : {&a.yv, &a.dyv}) *p = plan.floats(T * Po);
    for (float** p : {&a.hmean, &a.hrstd}) *p = plan.floats(T);
    for (float** p : {&a.hmod, &a.dhmod}) *p = plan.floats(T * 2 * D);
    for (float** p : {&a.t1, &a.t1g, &a.dt1g}) *p = plan.floats(Tc * D);
  }

  // The shared time projection, video and action tokens into x, text context into c.
  void encode(const ParamAccess& P, const PackedBatch& batch) override {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t T = batch.n_tokens, Tc = batch.n_context, D = cfg_.d_model, Tu = d.time_t.rows;
    const int Pin = cfg_.patch_dim_in(), A = cfg_.action_dim;
    const int64_t Tv = d.video.n, Ta = d.action.n;
    const View x = view(trunk_.x, T, D);

    ops.linear_forward(view(time_enc_.stemb, Tu, D), W(P, time_proj_), b(P, time_proj_), Activation::none, View{},
                       view(a.tp, Tu, 6 * D));

    // Patch-embed input: x0 for clean tokens (σ = 0), (1 − σ)·x0 + σ·ε for noisy ones.
    ops.flow_interpolate(d.video_x0, d.video_noise, RowIndex{}, d.sigma, d.video, view(a.vin, Tv, Pin));
    ops.linear_forward(view(a.vin, Tv, Pin), W(P, patch_embed_), b(P, patch_embed_), Activation::none, View{},
                       view(a.vemb, Tv, D));
    ops.zero(x);
    ops.copy_rows(view(a.vemb, Tv, D), RowIndex{}, x, d.video);
    if (Ta) {
      ops.flow_interpolate(d.act_x0, d.act_noise, RowIndex{}, d.sigma, d.action, view(a.ain, Ta, A));
      ops.linear_forward(view(a.ain, Ta, A), W(P, action_enc_), b(P, action_enc_), Activation::none, View{},
                         view(a.aemb, Ta, D));
      ops.copy_rows(view(a.aemb, Ta, D), RowIndex{}, x, d.action);
    }

    ops.linear_forward(d.context, W(P, text_fc1_), b(P, text_fc1_), Activation::gelu_tanh, view(a.t1, Tc, D),
                       view(a.t1g, Tc, D));
    ops.linear_forward(view(a.t1g, Tc, D), W(P, text_fc2_), b(P, text_fc2_), Activation::none, View{},
                       view(trunk_.c, Tc, D));
  }

  // Head over the noisy video and action tokens: sh/sc = head.modulation + temb, then head.proj
  // (video) or action_head (actions) on LN(x)·(1 + sc) + sh, and the two flow-matching losses.
  LossTerms head(const ParamAccess& P, const PackedBatch& batch, const std::vector<double>& den, bool backward,
                 double* sums) override {
    const DeviceBatch& d = dev_;
    EMB_CHECK(den[0] > 0, "wan loss: the noisy-video denominator is ", den[0],
              " (no noisy video token in the global batch)");
    EMB_CHECK(d.action.n == 0 || den[1] > 0, "wan loss: the action denominator is ", den[1]);
    Ops& ops = *ops_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Tu = d.time_t.rows;
    const int Po = cfg_.patch_dim_out(), A = cfg_.action_dim;
    const int64_t Tn = d.n_noisy, Ta = d.action.n, Th = Tn + Ta;
    const View hx = view(a.hx, Th, D), hmod = view(a.hmod, Th, 2 * D), hm = view(a.hm, Th, D);  // hmod: shift, scale

    ops.copy_rows(view(trunk_.x, batch.n_tokens, D), d.head_rows, hx, RowIndex{});
    const View temb = view(time_enc_.temb, Tu, D);
    ops.copy_rows(temb, d.head_time, hmod.cols_range(0, D), RowIndex{});
    ops.copy_rows(temb, d.head_time, hmod.cols_range(D, D), RowIndex{});
    ops.add_bias(hmod, P.pv(head_modulation_).flat());
    ops.norm_modulate_forward(hx, hmod.cols_range(D, D), hmod.cols_range(0, D), view(a.hln, Th, D), hm,
                              view(a.hmean, Th, 1), view(a.hrstd, Th, 1), kWanNormEps);
    ops.linear_forward(hm.rows_range(0, Tn), W(P, head_proj_), b(P, head_proj_), Activation::none, View{},
                       view(a.yv, Tn, Po));
    // The targets are the velocities ε − x0; head.proj's output element e is input element out_to_in[e].
    ops.mse_loss(view(a.yv, Tn, Po), d.video_noise, d.video_x0, View{}, d.noisy_video_row, d.out_to_in,
                 LossConfig{den[0], 1.0}, backward ? view(a.dyv, Tn, Po) : View{}, sums);
    const double lambda = cfg_.action_loss_weight;
    if (Ta) {
      ops.linear_forward(hm.rows_range(Tn, Ta), W(P, action_head_), b(P, action_head_), Activation::none, View{},
                         view(a.ya, Ta, A));
      ops.mse_loss(view(a.ya, Ta, A), d.act_noise, d.act_x0, View{}, RowIndex{}, RowIndex{},
                   LossConfig{den[1], lambda}, backward ? view(a.dya, Ta, A) : View{}, sums + 1);
    }
    LossTerms terms;
    terms.den0 = den[0], terms.lambda = lambda, terms.den1 = den[1], terms.second = Ta > 0;
    return terms;
  }

  void head_backward(const ParamAccess& P) override {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Tu = d.time_t.rows, T = int64_t(layout_.kind_index.size());
    const int64_t Tn = d.n_noisy, Ta = d.action.n, Th = Tn + Ta;
    const View hm = view(a.hm, Th, D), dhm = view(a.dhm, Th, D), dhmod = view(a.dhmod, Th, 2 * D);
    const View dhx = view(a.dhx, Th, D), hmod = view(a.hmod, Th, 2 * D);
    ops.zero(dhm), ops.zero(dhmod), ops.zero(dhx);
    ops.linear_backward(hm.rows_range(0, Tn), W(P, head_proj_), Activation::none, View{},
                        view(a.dyv, Tn, cfg_.patch_dim_out()), dhm.rows_range(0, Tn), dW(P, head_proj_),
                        db(P, head_proj_));
    if (Ta)
      ops.linear_backward(hm.rows_range(Tn, Ta), W(P, action_head_), Activation::none, View{},
                          view(a.dya, Ta, cfg_.action_dim), dhm.rows_range(Tn, Ta), dW(P, action_head_),
                          db(P, action_head_));
    ops.norm_modulate_backward(view(a.hx, Th, D), view(a.hln, Th, D), hmod.cols_range(D, D), view(a.hmean, Th, 1),
                               view(a.hrstd, Th, 1), dhm, dhx, dhmod.cols_range(D, D), dhmod.cols_range(0, D));
    const View dtable = P.gv(head_modulation_);
    if (!dtable.absent()) ops.column_sums(dhmod, dtable.flat());
    // temb feeds both chunks: its gradient is their sum, added into its time row.
    const View dhsum = view(a.dhsum, Th, D);
    ops.add(dhmod.cols_range(0, D), dhmod.cols_range(D, D), dhsum);
    ops.add_rows(dhsum, RowIndex{}, view(time_enc_.dtemb, Tu, D), d.head_time);
    ops.add_rows(dhx, RowIndex{}, view(trunk_.dx, T, D), d.head_rows);
  }

  void encode_backward(const ParamAccess& P, const PackedBatch& batch) override {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t T = batch.n_tokens, Tc = batch.n_context, D = cfg_.d_model, Tu = d.time_t.rows;
    const int64_t Tv = d.video.n, Ta = d.action.n;
    const View dx = view(trunk_.dx, T, D), dt1g = view(a.dt1g, Tc, D);

    ops.zero(dt1g);
    ops.linear_backward(view(a.t1g, Tc, D), W(P, text_fc2_), Activation::none, View{}, view(trunk_.dc, Tc, D), dt1g,
                        dW(P, text_fc2_), db(P, text_fc2_));
    ops.linear_backward(d.context, W(P, text_fc1_), Activation::gelu_tanh, view(a.t1, Tc, D), dt1g, View{},
                        dW(P, text_fc1_), db(P, text_fc1_));

    ops.copy_rows(dx, d.video, view(a.dvemb, Tv, D), RowIndex{});
    ops.linear_backward(view(a.vin, Tv, cfg_.patch_dim_in()), W(P, patch_embed_), Activation::none, View{},
                        view(a.dvemb, Tv, D), View{}, dW(P, patch_embed_), db(P, patch_embed_));
    if (Ta) {
      ops.copy_rows(dx, d.action, view(a.daemb, Ta, D), RowIndex{});
      ops.linear_backward(view(a.ain, Ta, cfg_.action_dim), W(P, action_enc_), Activation::none, View{},
                          view(a.daemb, Ta, D), View{}, dW(P, action_enc_), db(P, action_enc_));
    }

    ops.linear_backward(view(time_enc_.stemb, Tu, D), W(P, time_proj_), Activation::none, View{},
                        view(a.dtp, Tu, 6 * D), view(time_enc_.dstemb, Tu, D), dW(P, time_proj_), db(P, time_proj_));
  }
};

}  // namespace

std::unique_ptr<Model> make_wan_model(const ModelConfig& cfg, Ops* ops) { return std::make_unique<WanModel>(cfg, ops); }

}  // namespace emb
