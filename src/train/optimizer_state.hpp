// The AdamW moments of this rank's owned parameters, as a checkpoint saves and restores them:
// ShardLayout order, layout.owned_total() elements each. A view: the Optimizer owns the memory
// (Optimizer::state()).
#pragma once

namespace emb {

struct OptimizerState {
  float* exp_avg = nullptr;     // m, AdamW's first moment
  float* exp_avg_sq = nullptr;  // v, AdamW's second moment
};

}  // namespace emb
