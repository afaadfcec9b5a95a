#include "encoders/eagle/language_model.hpp"

#include <cmath>

namespace emb::encoders {

View language_model_forward(const EagleWeights& w, const EagleDims& d, ScratchPool& scratch, const View& embeds,
                            const std::vector<int64_t>& sample_offsets) {
  Ops& ops = scratch.ops();
  const int64_t N = embeds.rows, E = d.llm_hidden, I = d.llm_intermediate, hd = d.head_dim;
  const int64_t Q = d.llm_heads * hd, K = d.llm_kv_heads * hd;
  const View& x = embeds;
  const View h = scratch.make(N, E), q = scratch.make(N, Q), k = scratch.make(N, K), v = scratch.make(N, K);
  const View qn = scratch.make(N, Q), kn = scratch.make(N, K), a = scratch.make(N, Q), o = scratch.make(N, E);
  const View gate_up = scratch.make(N, 2 * I), m = scratch.make(N, I);
  const View rstd = scratch.make(N * d.llm_heads, 1, DType::f32);
  // The per-head views of q and k: RMSNorm over each head's hd values.
  auto heads = [](const View& t, int64_t n_heads, int64_t head_dim) {
    return View{t.data, t.dtype, t.rows * n_heads, head_dim, head_dim};
  };
  std::vector<int32_t> position(static_cast<size_t>(N));
  for (size_t s = 0; s + 1 < sample_offsets.size(); ++s)
    for (int64_t t = sample_offsets[s]; t < sample_offsets[s + 1]; ++t)
      position[size_t(t)] = int32_t(t - sample_offsets[s]);
  const int32_t* positions = scratch.index(position).data;
  const AttnSegments samples{sample_offsets.data(), nullptr, int(sample_offsets.size()) - 1};
  const EncoderAttnConfig attn{d.llm_heads, d.llm_kv_heads, int(hd), 1.0f / std::sqrt(float(hd)), true};
  const RopeHalfConfig q_rope{d.llm_heads, int(hd), d.rope_theta}, k_rope{d.llm_kv_heads, int(hd), d.rope_theta};
  const View row_rstd = rstd.rows_range(0, N);
  for (const Qwen3LayerWeights& l : w.llm) {
    ops.rmsnorm_forward(x, l.input_norm, h, row_rstd);
    ops.packed_linear_forward(h, l.q_w, View{}, Activation::none, View{}, q);
    ops.packed_linear_forward(h, l.k_w, View{}, Activation::none, View{}, k);
    ops.packed_linear_forward(h, l.v_w, View{}, Activation::none, View{}, v);
    ops.rmsnorm_forward(heads(q, d.llm_heads, hd), l.q_norm, heads(qn, d.llm_heads, hd), rstd);
    ops.rmsnorm_forward(heads(k, d.llm_kv_heads, hd), l.k_norm, heads(kn, d.llm_kv_heads, hd),
                        rstd.rows_range(0, N * d.llm_kv_heads));
    ops.rope_half_forward(qn, positions, q_rope);
    ops.rope_half_forward(kn, positions, k_rope);
    ops.encoder_attention_forward(qn, kn, v, View{}, AttnBias{}, a, View{}, attn, samples);
    ops.packed_linear_forward(a, l.o_w, View{}, Activation::none, View{}, o);
    ops.gated_residual_forward(x, View{}, o);
    ops.rmsnorm_forward(x, l.post_norm, h, row_rstd);
    ops.packed_linear_forward(h, l.gate_up_w, View{}, Activation::none, View{}, gate_up);
    ops.gated_activation_forward(Activation::silu, gate_up.cols_range(0, I), gate_up.cols_range(I, I), m);
    ops.packed_linear_forward(m, l.down_w, View{}, Activation::none, View{}, o);
    ops.gated_residual_forward(x, View{}, o);
  }
  const View vl = scratch.make(N, E);
  ops.rmsnorm_forward(x, w.final_norm, vl, row_rstd);
  return vl;
}

}  // namespace emb::encoders
