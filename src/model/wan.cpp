// Family wan (MODEL.md): the DreamZero world-action model on the Wan video DiT. Units:
// 0 = encoders (patch_embed, text_emb, time_enc, the shared time_proj, action_enc: upstream's
// action encoder, action_encoder.hpp; with model.states_per_block the state encoder state_enc,
// upstream's state_encoder MLP), one unit per DiT block, last the head (head.modulation,
// head.proj, the action decoder action_dec). With model.clip_tokens the encoders include img_emb
// (image_embedding.hpp) and every cross-attention the image half (dit_block.hpp); with
// model.cond_channels the patch embedding reads the I2V y channels beside the noised latents.
#include <memory>

#include "core/error.hpp"
#include "model/action_encoder.hpp"
#include "model/activation_plan.hpp"
#include "model/image_embedding.hpp"
#include "model/model.hpp"

namespace emb {
namespace {

class WanModel final : public Model {
  // Parameters.
  LinearRef patch_embed_, text_fc1_, text_fc2_, time_proj_;
  ActionEncoder action_enc_;
  ImageEmbedding img_emb_;  // registered when the model has the CLIP context
  LinearRef state_fc1_, state_fc2_;  // registered when the model has state tokens
  int head_modulation_ = -1;
  LinearRef head_proj_, dec_fc1_, dec_fc2_;

  // Activations (arena) of the planned shape; d* are their gradients.
  struct Acts {
    float *tp = nullptr, *vin = nullptr, *vemb = nullptr, *ain = nullptr, *a_t = nullptr;
    float *t1 = nullptr, *t1g = nullptr;
    float *hx = nullptr, *hmean = nullptr, *hrstd = nullptr, *hln = nullptr, *hmod = nullptr, *hm = nullptr;
    float *yv = nullptr, *ya = nullptr, *xa = nullptr, *d1 = nullptr, *d1r = nullptr;
    float *dtp = nullptr, *dt1g = nullptr, *dhx = nullptr, *dhm = nullptr;
    float *dxa = nullptr, *dd1r = nullptr;
    float *st1 = nullptr, *st1r = nullptr, *dst1r = nullptr, *st2 = nullptr, *dst2 = nullptr;  // [Ts, Dh], [Ts, D]
    float *dhmod = nullptr, *dhsum = nullptr, *dyv = nullptr, *dya = nullptr, *dvemb = nullptr;
  } a_;

 public:
  WanModel(const ModelConfig& cfg, Ops* ops) : Model(cfg, ops) {
    const int D = cfg.d_model;
    reg_.begin_unit("encoders");
    patch_embed_ = reg_.add_linear("patch_embed", cfg.embed_patch_dim(), D);
    text_fc1_ = reg_.add_linear("text_emb.fc1", cfg.d_ctx, D);
    text_fc2_ = reg_.add_linear("text_emb.fc2", D, D);
    time_enc_.add_params(reg_, D, SinusConfig{true, 0});  // Wan's sinusoidal_embedding_1d
    time_proj_ = reg_.add_linear("time_proj", D, 6 * D);
    action_enc_.add_params(reg_, 0, cfg.action_dim, D);  // upstream's one embodiment slot
    if (cfg.states_per_block > 0) {  // upstream's state_encoder.layer1/2 ([1, Sd, Dh], [1, Dh, D]; one slot)
      state_fc1_ = reg_.add_linear("state_enc.fc1", cfg.state_dim, cfg.d_hidden_enc);
      state_fc2_ = reg_.add_linear("state_enc.fc2", cfg.d_hidden_enc, D);
    }
    if (cfg.clip_tokens > 0) img_emb_.add_params(reg_, cfg.d_clip, D);
    trunk_.teacher_forcing = teacher_forcing_of(cfg);
    for (int l = 0; l < cfg.n_layers; ++l) {
      reg_.begin_unit(str("blocks.", l));
      trunk_.blocks.add(add_wan_block(reg_, l, cfg));
    }
    reg_.begin_unit("head");
    head_modulation_ = reg_.add("head.modulation", {2, D}, ParamInit::normal, false);
    head_proj_ = reg_.add_linear("head.proj", D, cfg.patch_dim_out());
    // Upstream's action_decoder.layer1/2 ([1, D, Dh], [1, Dh, A]; one embodiment slot).
    dec_fc1_ = reg_.add_linear("action_dec.fc1", D, cfg.d_hidden_enc);
    dec_fc2_ = reg_.add_linear("action_dec.fc2", cfg.d_hidden_enc, cfg.action_dim);
  }

  // Both terms are means over the step's samples of per-sample means (DeviceBatch's row weights):
  // the denominator is the number of samples, those with noisy video tokens.
  std::vector<double> loss_counts(const PackedBatch& batch) const override {
    std::vector<bool> seen(size_t(batch.n_samples), false);
    double samples = 0;
    for (int64_t t = 0; t < batch.n_tokens; ++t)
      if (batch.kind[size_t(t)] == kNoisyVideo && !seen[size_t(batch.seq[size_t(t)])])
        seen[size_t(batch.seq[size_t(t)])] = true, samples += 1;
    return {samples, samples};
  }

 private:
  // The encoders' and the head's tensors by the rows they run on: the timesteps (tp), the video
  // tokens (patch embedding), the noisy video tokens (the head), the action and state tokens
  // (their encoders, the action decoder).
  void plan_activations(ActivationPlan& plan, const ActivationRows& rows) override {
    const int64_t D = cfg_.d_model, P = cfg_.embed_patch_dim(), Po = cfg_.patch_dim_out(), A = cfg_.action_dim;
    const int64_t Dh = cfg_.d_hidden_enc, Tci = int64_t(rows.samples) * cfg_.clip_tokens;
    const int64_t Tu = rows.time_rows, Tv = rows.video, Tn = rows.noisy_video, Ta = rows.actions, Ts = rows.states;
    time_enc_.plan(plan, Tu);
    trunk_.plan(plan, rows, Tci, D, D, 6 * D, cfg_.recompute);
    if (Tci) img_emb_.plan(plan, Tci);
    Acts& a = a_;
    for (float** p : {&a.tp, &a.dtp}) *p = plan.floats(Tu * 6 * D);
    trunk_.condition_on(a.tp, a.dtp);  // ada6 adds each block's modulation to silu(temb)·time_proj
    for (float** p : {&a.vemb, &a.dvemb}) *p = plan.floats(Tv * D);
    for (float** p : {&a.hx, &a.hln, &a.hm, &a.dhx, &a.dhm, &a.dhsum}) *p = plan.floats(Tn * D);
    action_enc_.plan(plan, Ta);
    a.a_t = plan.floats(2 * Ta);
    a.vin = plan.floats(Tv * P);
    for (float** p : {&a.ain, &a.ya, &a.dya}) *p = plan.floats(Ta * A);
    for (float** p : {&a.xa, &a.dxa}) *p = plan.floats(Ta * D);
    for (float** p : {&a.d1, &a.d1r, &a.dd1r}) *p = plan.floats(Ta * Dh);
    for (float** p : {&a.st1, &a.st1r, &a.dst1r}) *p = plan.floats(Ts * Dh);
    for (float** p : {&a.st2, &a.dst2}) *p = plan.floats(Ts * D);
    for (float** p : {&a.yv, &a.dyv}) *p = plan.floats(Tn * Po);
    for (float** p : {&a.hmean, &a.hrstd}) *p = plan.floats(Tn);
    for (float** p : {&a.hmod, &a.dhmod}) *p = plan.floats(Tn * 2 * D);
    for (float** p : {&a.t1, &a.t1g, &a.dt1g}) *p = plan.floats(rows.context * D);
  }

  // The shared time projection, video and action tokens into x, text context into c.
  void encode(const ParamAccess& P, const PackedBatch& batch) override {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t T = batch.n_tokens, Tc = batch.n_context, D = cfg_.d_model, Tu = d.time_t.rows;
    const int Pin = cfg_.embed_patch_dim(), A = cfg_.action_dim;
    const int64_t Tv = d.video.n, Ta = d.action.n;
    const View x = view(trunk_.x, T, D);
    check_dreamzero_inputs(batch);

    ops.linear_forward(view(time_enc_.stemb, Tu, D), W(P, time_proj_), b(P, time_proj_), Activation::none, View{},
                       view(a.tp, Tu, 6 * D));

    patch_embedding_input(view(a.vin, Tv, Pin));
    ops.linear_forward(view(a.vin, Tv, Pin), W(P, patch_embed_), b(P, patch_embed_), Activation::none, View{},
                       view(a.vemb, Tv, D));
    ops.zero(x);
    ops.copy_rows(view(a.vemb, Tv, D), RowIndex{}, x, d.video);
    if (Ta) {
      // The encoder's timestep is the token's 1000·σ, its time row's (two floats).
      ops.flow_interpolate(d.act_x0, d.act_noise, RowIndex{}, d.sigma, d.action, view(a.ain, Ta, A));
      ops.copy_rows(d.time_t, d.action_time, view(a.a_t, Ta, 2), RowIndex{});
      action_enc_.forward(ops, P, view(a.ain, Ta, A), view(a.a_t, Ta, 2), EmbRows{});
      ops.copy_rows(view(action_enc_.out, Ta, D), RowIndex{}, x, d.action);
    }
    if (d.state_tokens.n) state_encoder_forward(P);

    ops.linear_forward(d.context, W(P, text_fc1_), b(P, text_fc1_), Activation::gelu_tanh, view(a.t1, Tc, D),
                       view(a.t1g, Tc, D));
    ops.linear_forward(view(a.t1g, Tc, D), W(P, text_fc2_), b(P, text_fc2_), Activation::none, View{},
                       view(trunk_.c, Tc, D));
    if (d.clip.rows) img_emb_.forward(ops, P, d.clip, view(trunk_.cimg, d.clip.rows, D));
  }

  // The inputs of DreamZero's conditioning, as wide as the model's (one line naming the field).
  void check_dreamzero_inputs(const PackedBatch& batch) const {
    const DeviceBatch& d = dev_;
    EMB_CHECK(cfg_.cond_channels == 0 || d.video_cond.rows == d.video.n, "wan batch: video_cond has ",
              batch.video_cond.size(), " values, the model (cond_channels ", cfg_.cond_channels, ") needs ",
              d.video.n, " video tokens x ", cfg_.cond_patch_dim());
    EMB_CHECK(cfg_.clip_tokens == 0 || d.clip.rows == int64_t(batch.n_samples) * cfg_.clip_tokens, "wan batch: clip has ",
              batch.clip.size(), " values, the model needs ", batch.n_samples, " samples x ", cfg_.clip_tokens,
              " CLIP rows x ", cfg_.d_clip);
    EMB_CHECK(batch.act_mask.empty() || d.act_mask.rows == d.action.n, "wan batch: act_mask has ",
              batch.act_mask.size(), " values, expected ", d.action.n, " action tokens x ", cfg_.action_dim);
    EMB_CHECK(batch.has_real_action.empty() || batch.has_real_action.size() == size_t(batch.n_samples),
              "wan batch: has_real_action has ", batch.has_real_action.size(), " values, expected one per sample (",
              batch.n_samples, ")");
  }

  // The patch embedding's input rows vin [Tv, (C + Cy)·pixels]: per patch pixel the latents, x0 for
  // clean tokens (σ = 0) and (1 − σ)·x0 + σ·ε for noisy ones, then the I2V y channels, never noised.
  void patch_embedding_input(const View& vin) {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    if (cfg_.cond_channels == 0) {
      ops.flow_interpolate(d.video_x0, d.video_noise, RowIndex{}, d.sigma, d.video, vin);
      return;
    }
    const int C = cfg_.latent_channels, Cy = cfg_.cond_channels;
    for (int p = 0; p < cfg_.patch_pixels(); ++p) {
      ops.flow_interpolate(d.video_x0.cols_range(p * C, C), d.video_noise.cols_range(p * C, C), RowIndex{}, d.sigma,
                           d.video, vin.cols_range(p * (C + Cy), C));
      ops.copy(d.video_cond.cols_range(p * Cy, Cy), vin.cols_range(p * (C + Cy) + C, Cy));
    }
  }

  // State tokens: relu(state·state_enc.fc1)·state_enc.fc2 (upstream's CategorySpecificMLP).
  void state_encoder_forward(const ParamAccess& P) {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Ts = d.state_tokens.n, Dh = cfg_.d_hidden_enc;
    ops.linear_forward(d.state, W(P, state_fc1_), b(P, state_fc1_), Activation::relu, view(a.st1, Ts, Dh),
                       view(a.st1r, Ts, Dh));
    ops.linear_forward(view(a.st1r, Ts, Dh), W(P, state_fc2_), b(P, state_fc2_), Activation::none, View{},
                       view(a.st2, Ts, D));
    ops.copy_rows(view(a.st2, Ts, D), RowIndex{}, view(trunk_.x, int64_t(layout_.kind_index.size()), D),
                  d.state_tokens);
  }

  void state_encoder_backward(const ParamAccess& P, const View& dx) {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Ts = d.state_tokens.n, Dh = cfg_.d_hidden_enc;
    const View dst1r = view(a.dst1r, Ts, Dh);
    ops.copy_rows(dx, d.state_tokens, view(a.dst2, Ts, D), RowIndex{});
    ops.zero(dst1r);
    ops.linear_backward(view(a.st1r, Ts, Dh), W(P, state_fc2_), Activation::none, View{}, view(a.dst2, Ts, D), dst1r,
                        dW(P, state_fc2_), db(P, state_fc2_));
    ops.linear_backward(d.state, W(P, state_fc1_), Activation::relu, view(a.st1, Ts, Dh), dst1r, View{},
                        dW(P, state_fc1_), db(P, state_fc1_));
  }

  // Head over the noisy video tokens: sh/sc = head.modulation + temb, head.proj on
  // LN(x)·(1 + sc) + sh; the action decoder on the raw block output of the action tokens
  // (upstream's CausalWanModel: no norm, no modulation); the two flow-matching losses.
  LossTerms head(const ParamAccess& P, const PackedBatch& batch, const std::vector<double>& den, bool backward,
                 double* sums) override {
    const DeviceBatch& d = dev_;
    EMB_CHECK(den[0] > 0, "wan loss: the noisy-video denominator is ", den[0],
              " (no noisy video token in the global batch)");
    EMB_CHECK(d.action.n == 0 || den[1] > 0, "wan loss: the action denominator is ", den[1]);
    Ops& ops = *ops_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Tu = d.time_t.rows;
    const int Po = cfg_.patch_dim_out();
    const int64_t Tn = d.n_noisy, Ta = d.action.n;
    const View hx = view(a.hx, Tn, D), hmod = view(a.hmod, Tn, 2 * D), hm = view(a.hm, Tn, D);  // hmod: shift, scale

    ops.copy_rows(view(trunk_.x, batch.n_tokens, D), d.head_rows, hx, RowIndex{});
    const View temb = view(time_enc_.temb, Tu, D);
    ops.copy_rows(temb, d.head_time, hmod.cols_range(0, D), RowIndex{});
    ops.copy_rows(temb, d.head_time, hmod.cols_range(D, D), RowIndex{});
    ops.add_bias(hmod, P.pv(head_modulation_).flat());
    ops.norm_modulate_forward(hx, hmod.cols_range(D, D), hmod.cols_range(0, D), view(a.hln, Tn, D), hm,
                              view(a.hmean, Tn, 1), view(a.hrstd, Tn, 1), kWanNormEps);
    ops.linear_forward(hm, W(P, head_proj_), b(P, head_proj_), Activation::none, View{}, view(a.yv, Tn, Po));
    // The targets are the velocities ε − x0; head.proj's output element e is input element out_to_in[e].
    ops.mse_loss(view(a.yv, Tn, Po), d.video_noise, d.video_x0, View{}, d.noisy_video_row, d.out_to_in,
                 LossConfig{den[0], 1.0, d.video_weight}, backward ? view(a.dyv, Tn, Po) : View{}, sums);
    const double lambda = cfg_.action_loss_weight;
    if (Ta) action_decoder_forward(P, batch, LossConfig{den[1], lambda, d.act_weight}, backward, sums + 1);
    LossTerms terms;
    terms.den0 = den[0], terms.lambda = lambda, terms.den1 = den[1], terms.second = Ta > 0;
    return terms;
  }

  // â = relu(x_act·action_dec.fc1)·action_dec.fc2 and its loss against ε_a − a.
  void action_decoder_forward(const ParamAccess& P, const PackedBatch& batch, const LossConfig& loss, bool backward,
                              double* sum) {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Ta = d.action.n;
    const int A = cfg_.action_dim, Dh = cfg_.d_hidden_enc;
    ops.copy_rows(view(trunk_.x, batch.n_tokens, D), d.action, view(a.xa, Ta, D), RowIndex{});
    ops.linear_forward(view(a.xa, Ta, D), W(P, dec_fc1_), b(P, dec_fc1_), Activation::relu, view(a.d1, Ta, Dh),
                       view(a.d1r, Ta, Dh));
    ops.linear_forward(view(a.d1r, Ta, Dh), W(P, dec_fc2_), b(P, dec_fc2_), Activation::none, View{},
                       view(a.ya, Ta, A));
    ops.mse_loss(view(a.ya, Ta, A), d.act_noise, d.act_x0, d.act_mask, RowIndex{}, RowIndex{}, loss,
                 backward ? view(a.dya, Ta, A) : View{}, sum);
  }

  void action_decoder_backward(const ParamAccess& P) {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Ta = d.action.n, T = int64_t(layout_.kind_index.size());
    const int Dh = cfg_.d_hidden_enc;
    const View dd1r = view(a.dd1r, Ta, Dh), dxa = view(a.dxa, Ta, D);
    ops.zero(dd1r), ops.zero(dxa);
    ops.linear_backward(view(a.d1r, Ta, Dh), W(P, dec_fc2_), Activation::none, View{},
                        view(a.dya, Ta, cfg_.action_dim), dd1r, dW(P, dec_fc2_), db(P, dec_fc2_));
    ops.linear_backward(view(a.xa, Ta, D), W(P, dec_fc1_), Activation::relu, view(a.d1, Ta, Dh), dd1r, dxa,
                        dW(P, dec_fc1_), db(P, dec_fc1_));
    ops.add_rows(dxa, RowIndex{}, view(trunk_.dx, T, D), d.action);
  }

  void head_backward(const ParamAccess& P) override {
    Ops& ops = *ops_;
    const DeviceBatch& d = dev_;
    const Acts& a = a_;
    const int64_t D = cfg_.d_model, Tu = d.time_t.rows, T = int64_t(layout_.kind_index.size());
    const int64_t Tn = d.n_noisy;
    const View hm = view(a.hm, Tn, D), dhm = view(a.dhm, Tn, D), dhmod = view(a.dhmod, Tn, 2 * D);
    const View dhx = view(a.dhx, Tn, D), hmod = view(a.hmod, Tn, 2 * D);
    ops.zero(dhm), ops.zero(dhmod), ops.zero(dhx);
    ops.linear_backward(hm, W(P, head_proj_), Activation::none, View{}, view(a.dyv, Tn, cfg_.patch_dim_out()), dhm,
                        dW(P, head_proj_), db(P, head_proj_));
    ops.norm_modulate_backward(view(a.hx, Tn, D), view(a.hln, Tn, D), hmod.cols_range(D, D), view(a.hmean, Tn, 1),
                               view(a.hrstd, Tn, 1), dhm, dhx, dhmod.cols_range(D, D), dhmod.cols_range(0, D));
    const View dtable = P.gv(head_modulation_);
    if (!dtable.absent()) ops.column_sums(dhmod, dtable.flat());
    // temb feeds both chunks: its gradient is their sum, added into its time row.
    const View dhsum = view(a.dhsum, Tn, D);
    ops.add(dhmod.cols_range(0, D), dhmod.cols_range(D, D), dhsum);
    ops.add_rows(dhsum, RowIndex{}, view(time_enc_.dtemb, Tu, D), d.head_time);
    ops.add_rows(dhx, RowIndex{}, view(trunk_.dx, T, D), d.head_rows);
    if (d.action.n) action_decoder_backward(P);
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
    if (d.clip.rows) img_emb_.backward(ops, P, d.clip, view(trunk_.dcimg, d.clip.rows, D));
    ops.linear_backward(view(a.vin, Tv, cfg_.embed_patch_dim()), W(P, patch_embed_), Activation::none, View{},
                        view(a.dvemb, Tv, D), View{}, dW(P, patch_embed_), db(P, patch_embed_));
    if (Ta) {
      ops.copy_rows(dx, d.action, view(action_enc_.dout, Ta, D), RowIndex{});
      action_enc_.backward(ops, P, view(a.ain, Ta, cfg_.action_dim), EmbRows{});
    }
    if (d.state_tokens.n) state_encoder_backward(P, dx);

    ops.linear_backward(view(time_enc_.stemb, Tu, D), W(P, time_proj_), Activation::none, View{},
                        view(a.dtp, Tu, 6 * D), view(time_enc_.dstemb, Tu, D), dW(P, time_proj_), db(P, time_proj_));
  }
};

}  // namespace

std::unique_ptr<Model> make_wan_model(const ModelConfig& cfg, Ops* ops) { return std::make_unique<WanModel>(cfg, ops); }

}  // namespace emb
