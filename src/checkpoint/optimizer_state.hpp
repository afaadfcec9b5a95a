// The AdamW moments of this rank's owned parameters, as a checkpoint saves and restores them:
// ShardLayout order, layout.owned_total() elements each, in host memory. A view: the caller
// owns the memory (Optimizer::download_state / upload_state copy to and from the backend).
#pragma once

namespace emb {

struct OptimizerState {
  float* exp_avg = nullptr;     // m, AdamW's first moment
  float* exp_avg_sq = nullptr;  // v, AdamW's second moment
};

}  // namespace emb
