#include "encoders/eagle/language_model_training.hpp"

#include "core/error.hpp"

namespace emb::encoders {
namespace {

// The per-head view [T·H, hd] of a contiguous [T, H·hd]: per-head RMSNorm rows.
View per_head(const View& t, int64_t n_heads, int64_t head_dim) {
  return View{t.data, t.dtype, t.rows * n_heads, head_dim, head_dim};
}

}  // namespace

int64_t LanguageModelTraining::activation_floats_per_token(const EagleDims& d) {
  const int64_t E = d.llm_hidden, I = d.llm_intermediate, Q = int64_t(d.llm_heads) * d.head_dim;
  const int64_t K = int64_t(d.llm_kv_heads) * d.head_dim;
  const int64_t per_layer = 4 * E + 5 * Q + 2 * K + 3 * I + 2 * d.llm_heads + d.llm_kv_heads + 2;
  return d.select_layer * per_layer + 2 * E + 1;
}

AttnIndex LanguageModelTraining::causal_attention() const {
  // block_causal with every token its own block (its position) and one group: key j is allowed
  // for query i iff they share the sample and position(j) <= position(i).
  AttnIndex idx;
  idx.mask = AttnMask::block_causal;
  idx.q_seq = idx.k_seq = sample_of_row_->data();
  idx.q_blk = idx.k_blk = positions_->data();
  idx.q_grp = idx.k_grp = zeros_->data();
  return idx;
}

View LanguageModelTraining::forward(const EagleWeights& w, const View& embeds, const std::vector<int64_t>& sample_offsets) {
  const int64_t N = embeds.rows, E = d_.llm_hidden, I = d_.llm_intermediate, hd = d_.head_dim;
  const int64_t Hq = d_.llm_heads, Hkv = d_.llm_kv_heads, Q = Hq * hd, K = Hkv * hd, group = Hq / Hkv;
  EMB_ASSERT(embeds.cols == E && sample_offsets.back() == N);
  store_ = std::make_unique<BackendTensors>(ops_, DType::f32);
  BackendTensors& a = *store_;
  std::vector<int32_t> position(static_cast<size_t>(N)), sample(static_cast<size_t>(N));
  for (size_t s = 0; s + 1 < sample_offsets.size(); ++s)
    for (int64_t t = sample_offsets[s]; t < sample_offsets[s + 1]; ++t)
      position[size_t(t)] = int32_t(t - sample_offsets[s]), sample[size_t(t)] = int32_t(s);
  positions_ = std::make_unique<BackendIndex>(ops_, position);
  sample_of_row_ = std::make_unique<BackendIndex>(ops_, sample);
  zeros_ = std::make_unique<BackendIndex>(ops_, std::vector<int32_t>(size_t(N), 0));
  const AttnIndex causal = causal_attention();
  const RopeHalfConfig q_rope{int(Hq), int(hd), d_.rope_theta}, k_rope{int(Hkv), int(hd), d_.rope_theta};
  const View o = a.make(N, E), v = a.make(N, K), kn = a.make(N, K);
  View x = a.make(N, E);
  ops_.copy(embeds, x);
  layers_.assign(w.llm.size(), LayerActivations{});
  for (size_t l = 0; l < w.llm.size(); ++l) {
    const Qwen3LayerWeights& lw = w.llm[l];
    LayerActivations& s = layers_[l];
    s.x_in = x, s.h1 = a.make(N, E), s.rstd1 = a.make(N, 1);
    ops_.rmsnorm_forward(x, lw.input_norm, s.h1, s.rstd1);
    s.q = a.make(N, Q), s.k = a.make(N, K), s.rstd_q = a.make(N * Hq, 1), s.rstd_k = a.make(N * Hkv, 1);
    ops_.linear_forward(s.h1, lw.q_w, View{}, Activation::none, View{}, s.q);
    ops_.linear_forward(s.h1, lw.k_w, View{}, Activation::none, View{}, s.k);
    ops_.linear_forward(s.h1, lw.v_w, View{}, Activation::none, View{}, v);
    s.q_rot = a.make(N, Q), s.k_rep = a.make(N, Q), s.v_rep = a.make(N, Q);
    ops_.rmsnorm_forward(per_head(s.q, Hq, hd), lw.q_norm, per_head(s.q_rot, Hq, hd), s.rstd_q);
    ops_.rmsnorm_forward(per_head(s.k, Hkv, hd), lw.k_norm, per_head(kn, Hkv, hd), s.rstd_k);
    ops_.rope_half_forward(s.q_rot, positions_->data(), q_rope);
    ops_.rope_half_forward(kn, positions_->data(), k_rope);
    for (int64_t h = 0; h < Hq; ++h) {
      ops_.copy(head(kn, h / group), head(s.k_rep, h));
      ops_.copy(head(v, h / group), head(s.v_rep, h));
    }
    s.att = a.make(N, Q), s.lse = a.make(N, Hq);
    ops_.attention_forward(s.q_rot, s.k_rep, s.v_rep, s.att, s.lse, AttnConfig{int(Hq), int(hd)}, causal);
    ops_.linear_forward(s.att, lw.o_w, View{}, Activation::none, View{}, o);
    s.x_mid = a.make(N, E);
    ops_.add(x, o, s.x_mid);
    s.h2 = a.make(N, E), s.rstd2 = a.make(N, 1);
    ops_.rmsnorm_forward(s.x_mid, lw.post_norm, s.h2, s.rstd2);
    s.gate_up = a.make(N, 2 * I), s.m = a.make(N, I);
    ops_.linear_forward(s.h2, lw.gate_up_w, View{}, Activation::none, View{}, s.gate_up);
    ops_.gated_activation_forward(Activation::silu, s.gate_up.cols_range(0, I), s.gate_up.cols_range(I, I), s.m);
    ops_.linear_forward(s.m, lw.down_w, View{}, Activation::none, View{}, o);
    x = a.make(N, E);
    ops_.add(s.x_mid, o, x);
  }
  x_out_ = x, rstd_out_ = a.make(N, 1);
  const View vl = a.make(N, E);
  ops_.rmsnorm_forward(x_out_, w.final_norm, vl, rstd_out_);
  return vl;
}

// The forward in reverse, input gradients only; dx is the residual stream's gradient, which each
// sublayer's norm backward adds to.
void LanguageModelTraining::backward(const EagleWeights& w, const View& dvl, const View& dembeds) {
  EMB_ASSERT(store_ && layers_.size() == w.llm.size());
  const int64_t N = x_out_.rows, E = d_.llm_hidden, I = d_.llm_intermediate, hd = d_.head_dim;
  const int64_t Hq = d_.llm_heads, Hkv = d_.llm_kv_heads, Q = Hq * hd, K = Hkv * hd, group = Hq / Hkv;
  const AttnIndex causal = causal_attention();
  const RopeHalfConfig q_rope{int(Hq), int(hd), d_.rope_theta}, k_rope{int(Hkv), int(hd), d_.rope_theta};
  BackendTensors scratch(ops_, DType::f32);
  const View dx = scratch.make(N, E), dh = scratch.make(N, E), dm = scratch.make(N, I), dgu = scratch.make(N, 2 * I);
  const View datt = scratch.make(N, Q), dq_rot = scratch.make(N, Q), dk_rep = scratch.make(N, Q);
  const View dv_rep = scratch.make(N, Q), dq = scratch.make(N, Q), dkn = scratch.make(N, K), dk = scratch.make(N, K);
  const View dv = scratch.make(N, K);
  ops_.zero(dx);
  ops_.rmsnorm_backward(x_out_, w.final_norm, rstd_out_, dvl, dx, View{});
  for (size_t l = w.llm.size(); l-- > 0;) {
    const Qwen3LayerWeights& lw = w.llm[l];
    const LayerActivations& s = layers_[l];
    ops_.zero(dm), ops_.zero(dgu), ops_.zero(dh);
    ops_.linear_backward(s.m, lw.down_w, Activation::none, View{}, dx, dm, View{}, View{});
    ops_.gated_activation_backward(Activation::silu, s.gate_up.cols_range(0, I), s.gate_up.cols_range(I, I), dm,
                                   dgu.cols_range(0, I), dgu.cols_range(I, I));
    ops_.linear_backward(s.h2, lw.gate_up_w, Activation::none, View{}, dgu, dh, View{}, View{});
    ops_.rmsnorm_backward(s.x_mid, lw.post_norm, s.rstd2, dh, dx, View{});
    for (const View& g : {datt, dq_rot, dk_rep, dv_rep, dq, dkn, dk, dv, dh}) ops_.zero(g);
    ops_.linear_backward(s.att, lw.o_w, Activation::none, View{}, dx, datt, View{}, View{});
    ops_.attention_backward(s.q_rot, s.k_rep, s.v_rep, s.att, s.lse, datt, dq_rot, dk_rep, dv_rep,
                            AttnConfig{int(Hq), int(hd)}, causal);
    for (int64_t h = 0; h < Hq; ++h) {  // the repeats' gradients back onto their kv head
      ops_.add(head(dkn, h / group), head(dk_rep, h), head(dkn, h / group));
      ops_.add(head(dv, h / group), head(dv_rep, h), head(dv, h / group));
    }
    ops_.rope_half_backward(dq_rot, positions_->data(), q_rope);
    ops_.rope_half_backward(dkn, positions_->data(), k_rope);
    ops_.rmsnorm_backward(per_head(s.q, Hq, hd), lw.q_norm, s.rstd_q, per_head(dq_rot, Hq, hd), per_head(dq, Hq, hd),
                          View{});
    ops_.rmsnorm_backward(per_head(s.k, Hkv, hd), lw.k_norm, s.rstd_k, per_head(dkn, Hkv, hd), per_head(dk, Hkv, hd),
                          View{});
    ops_.linear_backward(s.h1, lw.q_w, Activation::none, View{}, dq, dh, View{}, View{});
    ops_.linear_backward(s.h1, lw.k_w, Activation::none, View{}, dk, dh, View{}, View{});
    ops_.linear_backward(s.h1, lw.v_w, Activation::none, View{}, dv, dh, View{}, View{});
    ops_.rmsnorm_backward(s.x_in, lw.input_norm, s.rstd1, dh, dx, View{});
  }
  ops_.add(dembeds, dx, dembeds);
}

}  // namespace emb::encoders
