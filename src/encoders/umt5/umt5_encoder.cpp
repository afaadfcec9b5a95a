#include "encoders/umt5/umt5_encoder.hpp"

#include "core/error.hpp"
#include "encoders/common/checkpoint_reader.hpp"

namespace emb::encoders {

namespace {

TensorOwner t5_tensors(const Umt5Dims& d) {
  return {"umT5 tensor", "umT5's encoder",
          str("dim ", d.dim, " and vocab ", d.vocab, " from token_embedding, dim_attn ", d.dim_attn, ", dim_ffn ",
              d.dim_ffn, ", ", d.buckets, " buckets x ", d.heads, " heads from block 0, ", d.layers, " blocks")};
}

}  // namespace

Umt5Encoder::Umt5Encoder(Ops& ops, WeightSource source, DType storage)
    : ops_(ops),
      source_(std::move(source)),
      dims_(read_umt5_dims(source_)),
      weights_store_(std::make_unique<BackendTensors>(ops, storage)),
      scratch_(ops, storage) {
  const Umt5Dims& d = dims_;
  const CheckpointReader r(source_, *weights_store_, t5_tensors(d));
  for (const auto& [name, shape] : umt5_tensor_shapes(d)) r.check(name, shape);
  for (int l = 0; l < d.layers; ++l) {
    const std::string b = str("blocks.", l, ".");
    Umt5LayerWeights w;
    w.norm1 = r.vector(b + "norm1.weight", d.dim), w.norm2 = r.vector(b + "norm2.weight", d.dim);
    w.qkv = r.linears({b + "attn.q.weight", b + "attn.k.weight", b + "attn.v.weight"}, d.dim,
                      {d.dim_attn, d.dim_attn, d.dim_attn});
    w.o = r.linear(b + "attn.o.weight", d.dim_attn, d.dim);
    w.gate_fc1 = r.linears({b + "ffn.gate.0.weight", b + "ffn.fc1.weight"}, d.dim, {d.dim_ffn, d.dim_ffn});
    w.fc2 = r.linear(b + "ffn.fc2.weight", d.dim_ffn, d.dim);
    // pos_embedding [buckets, heads] as the attention's [heads, buckets] table.
    const std::vector<float> table = r.read(b + "pos_embedding.embedding.weight", {d.buckets, d.heads});
    std::vector<float> per_head(table.size());
    for (int k = 0; k < d.buckets; ++k)
      for (int h = 0; h < d.heads; ++h) per_head[size_t(h * d.buckets + k)] = table[size_t(k * d.heads + h)];
    w.position_bias = r.upload(per_head, d.heads, d.buckets);
    layers_.push_back(w);
  }
  final_norm_ = r.vector("norm.weight", d.dim);
  std::vector<int32_t> buckets(size_t(2 * d.text_len - 1));
  for (int64_t i = 0; i < int64_t(buckets.size()); ++i) buckets[size_t(i)] = umt5_bucket(i - (d.text_len - 1), d);
  buckets_ = std::make_unique<BackendIndex>(ops, buckets);
}

void Umt5Encoder::encode(const std::vector<std::vector<int32_t>>& texts, const View& out) {
  const Umt5Dims& d = dims_;
  std::vector<int64_t> offsets = {0};
  for (size_t t = 0; t < texts.size(); ++t) {
    EMB_CHECK(int64_t(texts[t].size()) <= d.text_len, "umT5 encoder: text ", t, " has ", texts[t].size(),
              " tokens, more than the ", d.text_len, " the tokenizer keeps (it truncates to ", d.text_len - 1,
              " + </s>)");
    if (!texts[t].empty()) offsets.push_back(offsets.back() + int64_t(texts[t].size()));
  }
  const int64_t N = offsets.back();
  EMB_CHECK(out.rows == N && out.cols == d.dim, "umT5 encoder: out must be [", N, ", ", d.dim, "], not ",
            out.shape());
  if (N == 0) return;
  // The embedding rows, gathered on the host from the checkpoint.
  std::vector<float> rows(size_t(N * d.dim));
  int64_t r = 0;
  for (size_t t = 0; t < texts.size(); ++t)
    for (size_t i = 0; i < texts[t].size(); ++i, ++r) {
      const int32_t id = texts[t][i];
      EMB_CHECK(id >= 0 && id < d.vocab, "umT5 encoder: text ", t, " token ", i, " has id ", id,
                " outside the vocabulary of ", d.vocab);
      source_.read("token_embedding.weight", id * int64_t(d.dim), (id + 1) * int64_t(d.dim),
                   rows.data() + r * d.dim);
    }
  scratch_.recycle();
  const View x = scratch_.make(N, d.dim), h = scratch_.make(N, d.dim), qkv = scratch_.make(N, 3 * d.dim_attn);
  const View a = scratch_.make(N, d.dim_attn), o = scratch_.make(N, d.dim), gu = scratch_.make(N, 2 * d.dim_ffn);
  const View m = scratch_.make(N, d.dim_ffn), rstd = scratch_.make(N, 1, DType::f32);
  upload_rows(ops_, x, 0, rows.data(), N);
  const AttnSegments segments{offsets.data(), nullptr, int(offsets.size()) - 1};
  AttnBias bias;
  bias.kind = AttnBiasKind::relative_buckets, bias.buckets = buckets_->data();
  bias.n_rel = 2 * d.text_len - 1, bias.rel_zero = d.text_len - 1;
  const EncoderAttnConfig attn{d.heads, d.heads, d.head_dim(), 1.0f, false};  // T5: no 1/√d
  const int64_t A = d.dim_attn, F = d.dim_ffn;
  for (const Umt5LayerWeights& l : layers_) {
    ops_.rmsnorm_forward(x, l.norm1, h, rstd);
    ops_.packed_linear_forward(h, l.qkv, View{}, Activation::none, View{}, qkv);
    ops_.encoder_attention_forward(qkv.cols_range(0, A), qkv.cols_range(A, A), qkv.cols_range(2 * A, A),
                                   l.position_bias, bias, a, View{}, attn, segments);
    ops_.packed_linear_forward(a, l.o, View{}, Activation::none, View{}, o);
    ops_.gated_residual_forward(x, View{}, o);
    ops_.rmsnorm_forward(x, l.norm2, h, rstd);
    ops_.packed_linear_forward(h, l.gate_fc1, View{}, Activation::none, View{}, gu);
    ops_.gated_activation_forward(Activation::gelu_tanh, gu.cols_range(0, F), gu.cols_range(F, F), m);
    ops_.packed_linear_forward(m, l.fc2, View{}, Activation::none, View{}, o);
    ops_.gated_residual_forward(x, View{}, o);
  }
  ops_.rmsnorm_forward(x, final_norm_, out, rstd);
}

std::vector<float> Umt5Encoder::encode(const std::vector<std::vector<int32_t>>& texts) {
  int64_t N = 0;
  for (const auto& t : texts) N += int64_t(t.size());
  BackendTensors io(ops_, scratch_.dtype());
  const View out = io.make(N, dims_.dim);
  encode(texts, out);
  return N ? download(ops_, out) : std::vector<float>{};
}

}  // namespace emb::encoders
