// The rows a micro-batch's activations are sized by (Model::plan_activations), read off its
// packed tokens: the run plans its arena for them and --plan measures the same layout. The
// encoders and heads run on the tokens of one kind each (a wan micro-batch of DreamZero-14B's
// shape has 15960 query tokens, of them 7920 noisy video and 120 action tokens, and 6
// timesteps), so sizing their tensors by all query tokens held 13.5 GiB per rank that no op read.
#pragma once
#include <cstdint>

#include "batch/packed_batch.hpp"
#include "config/model_config.hpp"

namespace emb {

struct ActivationRows {
  int64_t tokens = 0, context = 0;  // query and context tokens
  int samples = 0;
  // An upper bound on the distinct timesteps (time_rows.hpp): one per (sample, wan block) of
  // the tokens a timestep is drawn for, one for the clean and padding tokens' timestep 0. The
  // draws of a step share a row only where they are equal, so the run may have fewer.
  int64_t time_rows = 0;
  int64_t video = 0, noisy_video = 0, actions = 0, states = 0;  // of the query tokens, by kind

  bool operator==(const ActivationRows& o) const {
    return tokens == o.tokens && context == o.context && samples == o.samples && time_rows == o.time_rows &&
           video == o.video && noisy_video == o.noisy_video && actions == o.actions && states == o.states;
  }
  bool operator!=(const ActivationRows& o) const { return !(*this == o); }
};

ActivationRows activation_rows(const ModelConfig& cfg, const PackedBatch& b);

}  // namespace emb
