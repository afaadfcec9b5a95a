// AdamW over this rank's owned parameters (the shards with ZeRO, everything with DDP), with
// global-norm clipping: the norm is summed over ranks' shards in double, so the update does
// not depend on how parameters were sharded. Parameters, gradients and moments live in the
// memory of the backend the model runs on (Ops); the update is Ops::adamw_step per decay
// segment, and the step's one device-to-host read is the local Σg² (a double).
#pragma once
#include <mpi.h>

#include <cstdint>

#include "comm/host_collectives.hpp"
#include "kernels/op_types.hpp"
#include "kernels/ops_buffer.hpp"
#include "checkpoint/optimizer_state.hpp"
#include "parallel/shard_layout.hpp"

namespace emb {

class Optimizer {
 public:
  Optimizer(const ShardLayout& layout, Ops& ops, const AdamWConfig& cfg, float grad_clip);

  // ‖g‖₂ over every parameter of the model (a collective when parameters are sharded).
  double global_grad_norm(const float* owned_grads, MPI_Comm comm);
  // One AdamW update at 1-based `step` with learning rate `lr`; returns the clip coefficient used.
  float step(float* owned_params, const float* owned_grads, int64_t step, double lr, double grad_norm);

  // The moments exist on the backend for trainable elements only (layout.trainable_owned_total()
  // each: a frozen tensor has none). In host memory they are in the owned layout
  // (layout.owned_total() floats each, zero for frozen elements), for a checkpoint to save, and
  // restored from there.
  int64_t state_bytes() const { return 2 * layout_.trainable_owned_total() * int64_t(sizeof(float)); }
  // What the constructor allocates on the backend for `layout` (the moments, at least one element
  // each, and one double per trainable run): --plan's count of a rank's optimizer memory.
  static int64_t device_bytes(const ShardLayout& layout);
  void download_state(OptimizerState host);
  void upload_state(OptimizerState host);

 private:
  const ShardLayout& layout_;
  Ops& ops_;
  AdamWConfig cfg_;
  float grad_clip_;
  OpsBuffer<float> m_, v_;
  OpsBuffer<double> sum_squares_;  // the local Σg² of each trainable run, read back once per step

  static int64_t moment_count(const ShardLayout& layout);
  static int64_t run_count(const ShardLayout& layout);
};

}  // namespace emb
