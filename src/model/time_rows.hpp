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
  std::vector<float> t;      // distinct timesteps, in order of first appearance
  std::vector<int32_t> row;  // [T]: the row of each token's timestep
};

void build_time_rows(const std::vector<float>& temb_t, TimeRows& rows);

}  // namespace emb
