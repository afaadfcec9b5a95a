// The blocks both families run between their encoders and their head: MODEL.md's trunk of
// DiT blocks over the token stream x [T, D], which cross-attend to the context c [Tc, Dc] and
// read one conditioning row per distinct timestep (time_rows.hpp), preceded by blocks over the
// context itself where the family has them (gr00t's vl_blocks; wan has none). The family's
// encoders write x and c, its head reads x; in backward the head writes dx and the encoders
// read dx, dc and the conditioning's gradient.
#pragma once
#include <cstdint>

#include "batch/packed_batch.hpp"
#include "model/activation_rows.hpp"
#include "model/block_stack.hpp"
#include "model/device_batch.hpp"

namespace emb {

class Trunk {
 public:
  // Filled by the family's constructor, one unit per block, context blocks first.
  BlockStack context_blocks, blocks;
  // What a teacher_forcing self-attention mask reads (wan with first_frame_block).
  TeacherForcing teacher_forcing;

  // Activations, fp32 (the residual streams, also beside bf16 block activations); d* are gradients.
  float *x = nullptr, *dx = nullptr;  // [T, D]
  float *c = nullptr, *dc = nullptr;  // [Tc, Dc]
  float *cimg = nullptr, *dcimg = nullptr;  // [Tci, D]: the image context (wan with clip_tokens; else Tci = 0)

  // rows: the micro-batch's (its tokens, context tokens and timesteps); cond_width: the width of
  // the conditioning rows (condition_on), one per timestep; Tci the image context's rows.
  void plan(ActivationPlan& plan, const ActivationRows& rows, int64_t Tci, int64_t D, int64_t Dc, int64_t cond_width,
            Recompute recompute);
  // What the blocks are conditioned on (BlockIO::cond), the family's fp32 activation of
  // plan's cond_width per row: gr00t's silu(temb) [D], wan's silu(temb)·time_proj [6D]. Set
  // after each plan.
  void condition_on(const float* cond, float* dcond);
  // Whether the blocks' dropout sites drop (training) in the micro-batches from now on, and the
  // step and seed their masks are keyed by (MODEL.md "Dropout").
  void set_dropout(bool on, uint64_t seed, int64_t step);

  void forward(Ops& ops, ParamAccess& P, const PackedBatch& b, const DeviceBatch& dev);
  // Zeroes dx, dc and the conditioning's gradient, which the head and the blocks add to.
  void zero_grads(Ops& ops, const PackedBatch& b, const DeviceBatch& dev);
  void backward(Ops& ops, ParamAccess& P, const PackedBatch& b, const DeviceBatch& dev);

 private:
  BlockIO blocks_io(const PackedBatch& b, const DeviceBatch& dev) const;
  BlockIO context_io(const PackedBatch& b, const DeviceBatch& dev) const;

  int64_t D_ = 0, Dc_ = 0, cond_width_ = 0;
  const float* cond_ = nullptr;
  float* dcond_ = nullptr;
  BlockDropout dropout_;
  // What the blocks read of c, cond and cimg, in their activation dtype: converted copies [Tc, Dc],
  // [time rows, cond_width] and [Tci, D] with bf16 activations (made once a micro-batch); themselves
  // with fp32.
  TensorPtr block_c_, block_cond_, block_cimg_;
  bool converts_inputs_ = false;
  BlockScratch scratch_;
};

}  // namespace emb
