// umT5-XXL's text encoder in embtrain (UPSTREAM.md "DreamZero's frozen encoders", spec §3), from
// the released state dict (models_t5_umt5-xxl-enc-bf16.pth, or its safetensors twin), forward
// only, on any Ops backend: token ids (tokenizers/umt5_tokenizer.hpp: the text, </s>, at most 512
// ids) → the final RMSNorm's rows [len, dim], the DiT's text context before its zero padding to
// 512 rows.
//
// Only each text's real tokens are computed: upstream runs all 512 padded rows with the padding
// masked out of every attention, and a masked key reaches no real row (its weight is exactly 0),
// so the real rows are the same (the reference checks 1e-13). Several texts go through in one
// pass as segments. The embedding rows are gathered on the host from the checkpoint's mapping
// (256384 × 4096 never held in backend memory).
#pragma once
#include <memory>
#include <vector>

#include "encoders/common/backend_tensors.hpp"
#include "encoders/common/scratch_pool.hpp"
#include "encoders/umt5/umt5_dims.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

struct Umt5LayerWeights {
  View norm1, norm2;  // [1, dim]
  View qkv;           // [dim, 3·dim_attn]: q | k | v
  View o;             // [dim_attn, dim]
  View gate_fc1;      // [dim, 2·dim_ffn]: gate | fc1
  View fc2;           // [dim_ffn, dim]
  View position_bias;  // [heads, buckets]
};

class Umt5Encoder {
 public:
  // storage: fp32, or bf16 on a backend with bf16 data (Wan keeps umT5 in bf16). Throws
  // emb::Error (exit 2) naming the file and the tensor missing or misshaped.
  Umt5Encoder(Ops& ops, WeightSource source, DType storage);

  const Umt5Dims& dims() const { return dims_; }
  int64_t weight_bytes() const { return weights_store_->bytes(); }

  // The rows of every text, back to back: host fp32 [Σ len, dim]. A text may be empty (no rows);
  // one longer than text_len, or an id outside the vocabulary, is one line (emb::Error).
  std::vector<float> encode(const std::vector<std::vector<int32_t>>& texts);
  // The same into backend memory: out [Σ len, dim] (the storage dtype, written).
  void encode(const std::vector<std::vector<int32_t>>& texts, const View& out);

 private:
  Ops& ops_;
  WeightSource source_;
  Umt5Dims dims_;
  std::unique_ptr<BackendTensors> weights_store_;
  std::vector<Umt5LayerWeights> layers_;
  View final_norm_;
  std::unique_ptr<BackendIndex> buckets_;  // [2·text_len − 1]: the bucket of rel + text_len − 1
  ScratchPool scratch_;
};

}  // namespace emb::encoders
