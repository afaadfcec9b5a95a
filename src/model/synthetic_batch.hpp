// Synthetic packed micro-batches for tests and benchmarks (and the token layout --plan
// counts). A sample's shape and content are a pure function of (config, seed, sample id), so
// the same samples can be packed in any order, split across micro-batches or padded, and must
// give the same loss and gradients.
//   gr00t sample: [state, future × Nf, actions × Hz] (all grp 1) + n_vl context tokens.
//   wan sample: clean video tokens (grp 0), noisy video tokens (grp 1), nb·Ha action tokens
//     (grp 1); video token of latent frame f is in block f / fpb, action j in block j / Ha;
//     + n_txt context tokens.
#pragma once
#include <cstdint>
#include <vector>

#include "batch/packed_batch.hpp"
#include "config/model_config.hpp"

namespace emb {

struct SampleShape {
  int n_context = 0;      // vl tokens (gr00t) or text tokens (wan)
  int latent_frames = 0;  // wan
};

// Varying lengths: gr00t n_vl in [4, 16]; wan n_txt in [1, max_text_tokens] and latent
// frames F or F − pt (kept at two blocks or more when F allows).
SampleShape synthetic_sample_shape(const ModelConfig& cfg, uint64_t seed, int64_t sample_id);

// A realistic full-size sample for --plan: gr00t 2 views × 64 tokens + 40 instruction tokens;
// wan max_text_tokens text tokens and all latent frames.
SampleShape typical_sample_shape(const ModelConfig& cfg);

// packed = false pads every sample to the longest one (query and context) with kPad tokens
// (seq < 0) and context tokens with cseq < 0, as packing = off does.
// with_content = false fills only the token index arrays (no features, states or latents).
PackedBatch make_batch(const ModelConfig& cfg, const std::vector<int64_t>& sample_ids,
                       const std::vector<SampleShape>& shapes, bool packed, uint64_t seed, bool with_content = true);

// make_batch with synthetic_sample_shape of each id.
PackedBatch make_synthetic_batch(const ModelConfig& cfg, const std::vector<int64_t>& sample_ids, bool packed,
                                 uint64_t seed);

}  // namespace emb
