// A rank's training state as the run allocates it (--plan "state per rank"): the buffers
// DataParallel allocates for the run's ShardLayout (parameters, gradients, bf16 compute copies,
// ZeRO-3 slots: parallel/data_parallel.hpp DataParallelBuffers) and the AdamW moments the
// Optimizer keeps for the trainable elements the rank owns (train/optimizer.hpp). Frozen tensors
// (train.tune_*, train/freezing.hpp) keep their parameters and gradient buffers but have no
// moments. ZeRO shards each piece of a bucket (its trained or frozen tensors: parallel/shard_layout.hpp)
// 1/N by elements, the remainders to the first ranks, so the ranks hold a few elements more or
// less, and where frozen tensors make more pieces, a few moments more or less: the figure is the
// largest rank's, the one that runs out of memory first.
#pragma once
#include <cstdint>
#include <vector>

#include "config/train_config.hpp"
#include "model/param_registry.hpp"

namespace emb {

// How the run lays out its training state: train.bucket_mb in bytes and, per tensor of the
// model's registry, whether train.tune_* freezes it (empty: every tensor trained).
struct PlanSharding {
  int64_t bucket_bytes = 0;
  std::vector<bool> frozen;
  // false: no state figures (a plan asked only for tokens and FLOPs; the state walks every rank's
  // layout, which at a thousand ranks is most of --plan's time).
  bool count_state = true;
};

// The largest rank's bytes under `mode` on `ranks` ranks (bf16_compute: model.precision = bf16).
double state_bytes_per_rank(const ParamRegistry& reg, ShardMode mode, int ranks, const PlanSharding& sharding,
                            bool bf16_compute);

}  // namespace emb
