// model.tune_visual: a context encoder the step trains (the Eagle backbone's vision tower and
// mlp1, train/tuned_backbone.hpp). Its tensors are ModelConfig::trained_context, registered
// first, each in the unit its TrainedContextTensor::unit names (the vision tower: one unit per
// SigLIP layer, as the DiT blocks are), so ZeRO-3 gathers and frees them one unit at a time,
// overlapped with the layers before, and reduce-scatters each unit's gradients as soon as its
// backward is done. The model calls forward before its encoders' unit, and backward after that
// unit's backward with the gradient of the context rows; the source enters its own units
// through the ParamAccess, ascending in forward and descending in backward.
#pragma once
#include <cstdint>

#include "batch/packed_batch.hpp"
#include "kernels/ops.hpp"
#include "model/unit_hooks.hpp"

namespace emb {

// Where the trained tensors are in the model's registry: the first tensor's index (the others
// follow in ModelConfig::trained_context's order) and the first tensor's unit (the others follow
// in order, one per distinct TrainedContextTensor::unit).
struct ContextParams {
  int first_tensor = -1;
  int first_unit = 0;
};

class ContextSource {
 public:
  virtual ~ContextSource() = default;
  // Writes the rows of batch.backend_context [n_context, d_ctx] (fp32, backend memory) from the
  // trained tensors, entering their units in forward.
  virtual void forward(ParamAccess& P, const ContextParams& at, const PackedBatch& batch, int64_t step) = 0;
  // The trained tensors' gradients += those of the last forward for dcontext, entering and
  // leaving their units in backward.
  virtual void backward(ParamAccess& P, const ContextParams& at, const View& dcontext) = 0;
};

}  // namespace emb
