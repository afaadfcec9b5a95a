// DreamZero's training schedule (upstream flow_match_scheduler.py 18-38, 88-92;
// /work/team/spec_dreamzero.md "One sample" 2), in double: timestep id i ∈ {0 .. 999},
// s_i = 1 − i/1000, σ_i = shift·s_i/(1 + (shift − 1)·s_i) (σ_0 = 1), t_i = 1000·σ_i, and the
// loss weight w_i = (y_i − min y)·1000/Σ(y − min y) with y_i = exp(−2((t_i − 500)/1000)²)
// (w_0 = 0, mean 1). Upstream builds the tables in float32 (they differ by ≤ 1.3e-7 in σ).
#pragma once
#include <vector>

namespace emb {

constexpr int kWanTrainTimesteps = 1000;

struct WanSchedule {
  explicit WanSchedule(double shift);
  std::vector<double> sigma, weight;  // [kWanTrainTimesteps]
};

}  // namespace emb
