// Family wan (MODEL.md): the DreamZero world-action model on the Wan video DiT. Units:
// 0 = encoders (patch_embed, text_emb, time_enc, the shared time_proj, action_enc), one unit
// per DiT block, last the head (head.modulation, head.proj, action_head).
#include <cstring>
#include <memory>

#include "core/error.hpp"
#include "kernels/cpu/activation.hpp"
#include "kernels/cpu/column_sum.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/modulate.hpp"
#include "kernels/cpu/norm.hpp"
#include "model/activation_plan.hpp"
#include "model/model.hpp"
#include "model/rows.hpp"

namespace emb {
namespace {

class WanModel final : public Model {
  // Parameters.
  LinearRef patch_embed_, text_fc1_, text_fc2_, time_proj_, action_enc_;
  int head_modulation_ = -1;
  LinearRef head_proj_, action_head_;

  std::vector<int32_t> head_rows_;  // noisy video tokens, then action tokens
  // Output element e of a patch reads input element out_to_in_[e] (head.proj may predict a
  // subset of the input channels: 14B's input adds mask and image channels).
  std::vector<int32_t> out_to_in_;

  // Activations (arena) of the planned shape; d* are their gradients.
  struct Acts {
    float *tp = nullptr, *vin = nullptr, *vemb = nullptr, *ain = nullptr, *aemb = nullptr;
    float *t1 = nullptr, *t1g = nullptr;
    float *hx = nullptr, *hmean = nullptr, *hrstd = nullptr, *hln = nullptr, *hmod = nullptr, *hm = nullptr;
    float *yv = nullptr, *ya = nullptr;
    float *dtp = nullptr, *dt1g = nullptr, *dt1 = nullptr, *dhx = nullptr, *dhln = nullptr, *dhm = nullptr;
    float *dhmod = nullptr, *dyv = nullptr, *dya = nullptr, *dvemb = nullptr, *daemb = nullptr;
  } a_;

 public:
  explicit WanModel(const ModelConfig& cfg) : Model(cfg) {
    const int D = cfg.d_model;
    reg_.begin_unit("encoders");
    patch_embed_ = reg_.add_linear("patch_embed", cfg.patch_dim_in(), D);
    text_fc1_ = reg_.add_linear("text_emb.fc1", cfg.d_ctx, D);
    text_fc2_ = reg_.add_linear("text_emb.fc2", D, D);
    time_enc_.add_params(reg_, D);
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

    // Patch elements are flattened (t, h, w, c); the head predicts channels c < out_channels.
    const int n_pix = cfg.patch[0] * cfg.patch[1] * cfg.patch[2];
    for (int p = 0; p < n_pix; ++p)
      for (int c = 0; c < cfg.out_channels; ++c) out_to_in_.push_back(p * cfg.latent_channels + c);
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
    trunk_.plan(plan, T, Tc, D, D, cfg_.recompute);
    Acts& a = a_;
    for (float** p : {&a.tp, &a.dtp}) *p = plan.floats(T * 6 * D);
    trunk_.condition_on(a.tp, a.dtp, 6 * D);  // ada6 adds each block's modulation to silu(temb)·time_proj
    for (float** p : {&a.vemb, &a.aemb, &a.hx, &a.hln, &a.hm, &a.dhx, &a.dhln, &a.dhm, &a.dvemb, &a.daemb})
      *p = plan.floats(T * D);
    a.vin = plan.floats(T * P);
    for (float** p : {&a.ain, &a.ya, &a.dya}) *p = plan.floats(T * A);
    for (float** p : {&a.yv, &a.dyv}) *p = plan.floats(T * Po);
    for (float** p : {&a.hmean, &a.hrstd}) *p = plan.floats(T);
    for (float** p : {&a.hmod, &a.dhmod}) *p = plan.floats(T * 2 * D);
    for (float** p : {&a.t1, &a.t1g, &a.dt1g, &a.dt1}) *p = plan.floats(Tc * D);
  }

  // The shared time projection, video and action tokens into x, text context into c.
  void encode(const ParamAccess& P, const PackedBatch& b) override {
    Acts& a = a_;
    const int64_t T = b.n_tokens, Tc = b.n_context, D = cfg_.d_model;
    const int Pin = cfg_.patch_dim_in(), A = cfg_.action_dim;
    const int64_t Tv = int64_t(layout_.video.size()), Ta = int64_t(layout_.action.size());

    const int64_t Tu = int64_t(time_rows_.t.size());
    cpu::linear_forward(time_enc_.stemb, P.p(time_proj_.weight), P.p(time_proj_.bias), a.tp, Tu, int(D),
                        int(6 * D));

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
    zero(trunk_.x, T * D);
    scatter_rows(a.vemb, layout_.video, D, trunk_.x);
    scatter_rows(a.aemb, layout_.action, D, trunk_.x);

    cpu::linear_forward(b.context.data(), P.p(text_fc1_.weight), P.p(text_fc1_.bias), a.t1, Tc, cfg_.d_ctx, int(D));
    cpu::gelu_tanh_forward(a.t1, a.t1g, Tc * D);
    cpu::linear_forward(a.t1g, P.p(text_fc2_.weight), P.p(text_fc2_.bias), trunk_.c, Tc, int(D), int(D));
  }

  // Head over the noisy video and action tokens: sh/sc = head.modulation + temb, then head.proj
  // (video) or action_head (actions) on LN(x)·(1 + sc) + sh, and the two flow-matching losses.
  double head(const ParamAccess& P, const PackedBatch& b, const std::vector<double>& den, bool backward) override {
    EMB_CHECK(den[0] > 0, "wan loss: the noisy-video denominator is ", den[0],
              " (no noisy video token in the global batch)");
    EMB_CHECK(layout_.action.empty() || den[1] > 0, "wan loss: the action denominator is ", den[1]);
    Acts& a = a_;
    const int64_t D = cfg_.d_model;
    const int Pin = cfg_.patch_dim_in(), Po = cfg_.patch_dim_out(), A = cfg_.action_dim;
    const int64_t Tn = int64_t(layout_.noisy.size()), Ta = int64_t(layout_.action.size()), Th = Tn + Ta;
    head_rows_ = layout_.noisy;
    head_rows_.insert(head_rows_.end(), layout_.action.begin(), layout_.action.end());

    gather_rows(trunk_.x, head_rows_, D, a.hx);
    cpu::layernorm_forward(a.hx, nullptr, nullptr, a.hln, a.hmean, a.hrstd, Th, int(D));
    const float* table = P.p(head_modulation_);
    for (int64_t r = 0; r < Th; ++r) {
      const float* temb = time_enc_.temb + int64_t(time_rows_.row[size_t(head_rows_[size_t(r)])]) * D;
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

  void head_backward(const ParamAccess& P) override {
    Acts& a = a_;
    const int64_t D = cfg_.d_model;
    const int64_t Tn = int64_t(layout_.noisy.size()), Ta = int64_t(layout_.action.size()), Th = Tn + Ta;
    zero(a.dhm, Th * D), zero(a.dhln, Th * D), zero(a.dhmod, Th * 2 * D), zero(a.dhx, Th * D);
    cpu::linear_backward(a.hm, P.p(head_proj_.weight), a.dyv, a.dhm, P.g(head_proj_.weight), P.g(head_proj_.bias),
                         Tn, int(D), cfg_.patch_dim_out());
    cpu::linear_backward(a.hm + Tn * D, P.p(action_head_.weight), a.dya, a.dhm + Tn * D, P.g(action_head_.weight),
                         P.g(action_head_.bias), Ta, int(D), cfg_.action_dim);
    cpu::modulate_backward(a.hln, a.hmod + D, 2 * D, a.dhm, a.dhln, a.dhmod + D, a.dhmod, Th, int(D));
    if (float* dtable = P.g(head_modulation_))
      cpu::accumulate_column_sums(Th, int(2 * D), dtable,
                                  [&](int64_t r, int c) { return double(a.dhmod[r * 2 * D + c]); });
    for (int64_t r = 0; r < Th; ++r) {
      float* dtemb = time_enc_.dtemb + int64_t(time_rows_.row[size_t(head_rows_[size_t(r)])]) * D;
      for (int64_t c = 0; c < D; ++c) dtemb[c] += a.dhmod[r * 2 * D + c] + a.dhmod[r * 2 * D + D + c];
    }
    cpu::layernorm_backward(a.hx, nullptr, a.hmean, a.hrstd, a.dhln, a.dhx, nullptr, nullptr, Th, int(D));
    scatter_add_rows(a.dhx, head_rows_, D, trunk_.dx);
  }

  void encode_backward(const ParamAccess& P, const PackedBatch& b) override {
    Acts& a = a_;
    const int64_t Tc = b.n_context, D = cfg_.d_model;
    const int64_t Tv = int64_t(layout_.video.size()), Ta = int64_t(layout_.action.size());

    zero(a.dt1g, Tc * D), zero(a.dt1, Tc * D);
    cpu::linear_backward(a.t1g, P.p(text_fc2_.weight), trunk_.dc, a.dt1g, P.g(text_fc2_.weight),
                         P.g(text_fc2_.bias), Tc, int(D), int(D));
    cpu::gelu_tanh_backward(a.t1, a.dt1g, a.dt1, Tc * D);
    cpu::linear_backward(b.context.data(), P.p(text_fc1_.weight), a.dt1, nullptr, P.g(text_fc1_.weight),
                         P.g(text_fc1_.bias), Tc, cfg_.d_ctx, int(D));

    gather_rows(trunk_.dx, layout_.video, D, a.dvemb);
    gather_rows(trunk_.dx, layout_.action, D, a.daemb);
    cpu::linear_backward(a.vin, P.p(patch_embed_.weight), a.dvemb, nullptr, P.g(patch_embed_.weight),
                         P.g(patch_embed_.bias), Tv, cfg_.patch_dim_in(), int(D));
    cpu::linear_backward(a.ain, P.p(action_enc_.weight), a.daemb, nullptr, P.g(action_enc_.weight),
                         P.g(action_enc_.bias), Ta, cfg_.action_dim, int(D));

    const int64_t Tu = int64_t(time_rows_.t.size());
    cpu::linear_backward(time_enc_.stemb, P.p(time_proj_.weight), a.dtp, time_enc_.dstemb, P.g(time_proj_.weight),
                         P.g(time_proj_.bias), Tu, int(D), int(6 * D));
  }
};

}  // namespace

std::unique_ptr<Model> make_wan_model(const ModelConfig& cfg) { return std::make_unique<WanModel>(cfg); }

}  // namespace emb
