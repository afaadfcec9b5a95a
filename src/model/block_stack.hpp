// A stack of blocks run one after another over the same tokens (gr00t's vl_blocks, either
// family's DiT blocks), one unit each, with activation recompute (DESIGN.md):
//   none: every block keeps its BlockActs.
//   selective: every block keeps its BlockActs except the attention cores (the attention
//     sublayers' normalised inputs, q/k/v and outputs: flash attention stores no probabilities,
//     so these are what attention costs in memory, as in Korthikanti et al.); those live in a
//     pool, and backward re-runs them from the kept sublayer inputs before a block's backward.
//   full: a block keeps only its input; backward re-runs its forward into a pool of activations
//     before its backward.
// A pool has one slot per distinct activation layout (same_activation_layout): one for wan's
// identical blocks, two for gr00t's alternating cross/self layers.
#pragma once
#include <vector>

#include "model/dit_block.hpp"

namespace emb {

class BlockStack {
 public:
  void add(const BlockSpec& spec) { specs_.push_back(spec); }
  const std::vector<BlockSpec>& specs() const { return specs_; }

  // rows = the number of tokens the blocks run over (io.T at run time, at most this); Tc, Tci
  // the context's and the image context's rows.
  void plan(ActivationPlan& plan, int64_t rows, int64_t Tc, int64_t Tci, Recompute recompute);

  // x [T, D]: input in, output of the last block out.
  void forward(Ops& ops, ParamAccess& params, const BlockIO& io, float* x);
  // dx: gradient of the output in, of the input out.
  void backward(Ops& ops, ParamAccess& params, const BlockIO& io, const BlockScratch& scratch, float* dx);

 private:
  BlockActs& acts_of(size_t l) { return recompute_ == Recompute::full ? acts_[pool_slot_[l]] : acts_[l]; }

  std::vector<BlockSpec> specs_;
  std::vector<BlockActs> acts_;
  std::vector<BlockActs> attention_cores_;  // selective: the pool the blocks' cores point into
  std::vector<size_t> pool_slot_;           // per block: its slot in the pool (full) or attention_cores_
  std::vector<float*> inputs_;              // full: each block's input [T, D]
  Recompute recompute_ = Recompute::none;
};

}  // namespace emb
