// The time embedding depends on a token's timestep alone, and so does everything computed
// from it before it meets a token (time_enc, wan's shared time_proj, gr00t's ada2 modulation
// and proj_out_1). Tokens with the same timestep therefore share one row of those tensors:
// a gr00t sample has one timestep for all its tokens, a wan sample one per block plus 0 for
// its clean video. Computing them per distinct timestep and gathering per token is the same
// math with a fraction of the GEMM rows.
#pragma once
#include <cstdint>
#include <vector>

namespace emb {

struct TimeRows {
  // [Tu, 2]: the distinct timesteps in order of first appearance, each as two floats whose sum
  // is the timestep (kernels/ops.hpp sinus_embedding): wan's 1000·σ is not an fp32 value.
  std::vector<float> t;
  std::vector<int32_t> row;  // [T]: the row of each token's timestep
};

// hi [T] and lo [T] (or empty: zeros): token i's timestep is hi[i] + lo[i].
void build_time_rows(const std::vector<float>& hi, const std::vector<float>& lo, TimeRows& rows);

}  // namespace emb
