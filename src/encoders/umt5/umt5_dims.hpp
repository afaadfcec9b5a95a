// umT5-XXL's encoder dimensions as Wan builds it (umt5_xxl, t5.py 456-469; DreamZero's
// wan_video_text_encoder.py is the same module), the tensors it reads by the names of
// models_t5_umt5-xxl-enc-bf16.pth, and T5's relative-position buckets (t5.py 221-264).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weights/weight_source.hpp"

namespace emb::encoders {

struct Umt5Dims {
  int64_t vocab = 256384;
  int dim = 4096, dim_attn = 4096, dim_ffn = 10240, heads = 64, layers = 24;
  int buckets = 32, max_distance = 128;  // bidirectional: half the buckets for keys after the query
  int text_len = 512;                    // the tokenizer's length: the most rows a text has
  int head_dim() const { return dim_attn / heads; }
};

// Every tensor the encoder reads with its stored shape (nn.Linear [out, in], no biases).
std::vector<std::pair<std::string, std::vector<int64_t>>> umt5_tensor_shapes(const Umt5Dims& d);

// The dimensions of a checkpoint from its tensors (token_embedding [vocab, dim], blocks.0's
// attn.q [dim_attn, dim], ffn.fc1 [dim_ffn, dim], pos_embedding [buckets, heads], the number of
// blocks); the loader then checks every tensor against them. Throws emb::Error (exit 2) naming the
// file when it is not a T5 encoder's state dict.
Umt5Dims read_umt5_dims(const WeightSource& source);

// The bucket of a key at relative position rel = key − query, as upstream computes it: |rel| < 8
// its own bucket, else 8 + ⌊log(|rel|/8) / log(max_distance/8) · 8⌋ capped at 15, in exact
// arithmetic (upstream's float32 logs give the same: thresholds 8, 12, 16, 23, 32, 46, 64, 91),
// plus 16 for a key after the query.
int umt5_bucket(int64_t rel, const Umt5Dims& d);

}  // namespace emb::encoders
