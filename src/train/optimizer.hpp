// AdamW over this rank's owned parameters (the shards with ZeRO, everything with DDP), with
// global-norm clipping: the norm is summed over ranks' shards in double, so the update does
// not depend on how parameters were sharded.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/adamw.hpp"
#include "train/optimizer_state.hpp"
#include "train/shard_layout.hpp"

namespace emb {

class Optimizer {
 public:
  Optimizer(const ShardLayout& layout, const cpu::AdamWConfig& cfg, float grad_clip);

  // ‖g‖₂ over every parameter of the model (a collective when parameters are sharded).
  double global_grad_norm(const float* owned_grads, MPI_Comm comm) const;
  // One AdamW update at 1-based `step` with learning rate `lr`; returns the clip coefficient used.
  float step(float* owned_params, const float* owned_grads, int64_t step, double lr, double grad_norm);

  // The moments, for a checkpoint to save or restore.
  OptimizerState state() { return {m_.data(), v_.data()}; }

 private:
  const ShardLayout& layout_;
  cpu::AdamWConfig cfg_;
  float grad_clip_;
  std::vector<float> m_, v_;
};

}  // namespace emb
