#include "model/activation_rows.hpp"

#include <set>
#include <utility>

namespace emb {

ActivationRows activation_rows(const ModelConfig& cfg, const PackedBatch& b) {
  ActivationRows r;
  r.tokens = b.n_tokens, r.context = b.n_context, r.samples = b.n_samples;
  const bool wan = cfg.family == Family::wan;
  std::set<std::pair<int32_t, int32_t>> timesteps;  // (sample, block); (-1, -1) for timestep 0
  for (int64_t t = 0; t < b.n_tokens; ++t) {
    const int32_t s = b.seq[size_t(t)], kind = b.kind[size_t(t)];
    const bool zero = s < 0 || (wan && kind == kClean);
    timesteps.insert(zero ? std::make_pair(-1, -1) : std::make_pair(s, wan ? b.blk[size_t(t)] : 0));
    r.video += kind == kClean || kind == kNoisyVideo;
    r.noisy_video += kind == kNoisyVideo;
    r.actions += kind == kAction;
    r.states += kind == kState;
  }
  r.time_rows = int64_t(timesteps.size());
  return r;
}

}  // namespace emb
