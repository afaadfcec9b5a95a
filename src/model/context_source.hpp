// model.tune_visual: a context encoder the step trains (the Eagle backbone's vision tower and
// mlp1, train/tuned_backbone.hpp). Its tensors are ModelConfig::trained_context, registered
// contiguously at the end of unit 0, so ZeRO-3 gathers them with the head's encoders and
// reduce-scatters their gradients after encode_backward, through the same buckets. The model
// calls forward inside unit 0's forward, before it reads the context, and backward inside unit
// 0's backward with the gradient of the context rows.
#pragma once
#include <cstdint>

#include "batch/packed_batch.hpp"
#include "kernels/ops.hpp"

namespace emb {

class ContextSource {
 public:
  virtual ~ContextSource() = default;
  // Writes the rows of batch.backend_context [n_context, d_ctx] (fp32, backend memory) from
  // `params` (the trained_context tensors, fp32, contiguous in the registry's order).
  virtual void forward(const float* params, const PackedBatch& batch, int64_t step) = 0;
  // grads (params' layout) += the gradient of the last forward's parameters for dcontext.
  virtual void backward(const float* params, const View& dcontext, float* grads) = 0;
};

}  // namespace emb
