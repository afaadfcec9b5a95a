#include "encoders/umt5/umt5_dims.hpp"

#include "core/error.hpp"

namespace emb::encoders {

std::vector<std::pair<std::string, std::vector<int64_t>>> umt5_tensor_shapes(const Umt5Dims& d) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> s = {{"token_embedding.weight", {d.vocab, d.dim}}};
  for (int l = 0; l < d.layers; ++l) {
    const std::string b = str("blocks.", l, ".");
    s.push_back({b + "norm1.weight", {d.dim}});
    for (const char* n : {"q", "k", "v"}) s.push_back({b + "attn." + n + ".weight", {d.dim_attn, d.dim}});
    s.push_back({b + "attn.o.weight", {d.dim, d.dim_attn}});
    s.push_back({b + "norm2.weight", {d.dim}});
    s.push_back({b + "ffn.gate.0.weight", {d.dim_ffn, d.dim}});
    s.push_back({b + "ffn.fc1.weight", {d.dim_ffn, d.dim}});
    s.push_back({b + "ffn.fc2.weight", {d.dim, d.dim_ffn}});
    s.push_back({b + "pos_embedding.embedding.weight", {d.buckets, d.heads}});
  }
  s.push_back({"norm.weight", {d.dim}});
  return s;
}

Umt5Dims read_umt5_dims(const WeightSource& source) {
  const TensorInfo* embedding = source.find("token_embedding.weight");
  const TensorInfo* q = source.find("blocks.0.attn.q.weight");
  const TensorInfo* fc1 = source.find("blocks.0.ffn.fc1.weight");
  const TensorInfo* pos = source.find("blocks.0.pos_embedding.embedding.weight");
  if (!embedding || embedding->shape.size() != 2 || !q || q->shape.size() != 2 || !fc1 || fc1->shape.size() != 2 ||
      !pos || pos->shape.size() != 2)
    throw Error(str(source.path(), ": not a umT5 encoder checkpoint (expected token_embedding.weight [vocab, dim], ",
                    "blocks.0.attn.q.weight, blocks.0.ffn.fc1.weight and blocks.0.pos_embedding.embedding.weight, as ",
                    "models_t5_umt5-xxl-enc-bf16.pth holds)"),
                kExitInput);
  Umt5Dims d;
  d.vocab = embedding->shape[0], d.dim = int(embedding->shape[1]);
  d.dim_attn = int(q->shape[0]), d.dim_ffn = int(fc1->shape[0]);
  d.buckets = int(pos->shape[0]), d.heads = int(pos->shape[1]);
  d.layers = 0;
  while (source.find(str("blocks.", d.layers, ".norm1.weight"))) ++d.layers;
  if (d.heads <= 0 || d.dim_attn % d.heads != 0 || d.buckets % 4 != 0)
    throw Error(str(source.path(), ": blocks.0.pos_embedding.embedding.weight [", d.buckets, ", ", d.heads,
                    "] does not give heads dividing dim_attn ", d.dim_attn, " and buckets a multiple of 4"),
                kExitInput);
  return d;
}

int umt5_bucket(int64_t rel, const Umt5Dims& d) {
  const int half = d.buckets / 2, exact = half / 2, steps = half - exact;
  const int64_t n = rel < 0 ? -rel : rel;
  const int after = rel > 0 ? half : 0;
  if (n < exact) return after + int(n);
  // The largest k < steps with (n / exact)^steps ≥ (max_distance / exact)^k, compared as
  // n^steps · exact^k ≥ exact^steps · max_distance^k in long double: exact where the two can be
  // equal (n a power of two), and elsewhere they differ by far more than the rounding.
  int k = 0;
  while (k + 1 < steps) {
    long double lhs = 1, rhs = 1;
    for (int i = 0; i < steps; ++i) lhs *= (long double)n, rhs *= (long double)exact;
    for (int i = 0; i < k + 1; ++i) lhs *= (long double)exact, rhs *= (long double)d.max_distance;
    if (lhs < rhs) break;
    ++k;
  }
  return after + exact + k;
}

}  // namespace emb::encoders
