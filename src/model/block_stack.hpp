// A stack of blocks run one after another over the same tokens (gr00t's vl_blocks, either
// family's DiT blocks), one unit each, with activation recompute (DESIGN.md):
//   none / selective: every block keeps its BlockActs. (Flash attention already recomputes the
//     attention probabilities in backward, so the attention recompute that "selective" means
//     in Korthikanti et al. is what the kernels do anyway.)
//   full: a block keeps only its input; backward re-runs its forward into a pool of activations
//     before its backward. Blocks alternate between at most two shapes (gr00t's cross/self
//     layers), so block l uses pool slot l % 2.
#pragma once
#include <vector>

#include "model/dit_block.hpp"

namespace emb {

class BlockStack {
 public:
  void add(const BlockSpec& spec) { specs_.push_back(spec); }
  const std::vector<BlockSpec>& specs() const { return specs_; }

  // rows = the number of tokens the blocks run over (io.T at run time, at most this).
  void plan(ActivationPlan& plan, int64_t rows, int64_t Tc, Recompute recompute);

  // x [T, D]: input in, output of the last block out.
  void forward(ParamAccess& params, const BlockIO& io, float* x);
  // dx: gradient of the output in, of the input out. `work` [T, D] holds a recomputed input.
  void backward(ParamAccess& params, const BlockIO& io, const BlockScratch& scratch, float* dx, float* work);

 private:
  BlockActs& acts_of(size_t l) { return recompute_ ? acts_[l % acts_.size()] : acts_[l]; }

  std::vector<BlockSpec> specs_;
  std::vector<BlockActs> acts_;
  std::vector<float*> inputs_;  // full recompute: each block's input [T, D]
  bool recompute_ = false;
};

}  // namespace emb
