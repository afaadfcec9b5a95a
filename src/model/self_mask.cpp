#include "model/self_mask.hpp"

namespace emb {

AttnMask dit_self_mask(const ModelConfig& cfg) {
  switch (cfg.self_mask) {
    case SelfMask::full: return AttnMask::full;
    case SelfMask::block_causal: return AttnMask::block_causal;
    case SelfMask::prefix: return AttnMask::prefix;
    case SelfMask::family: break;
  }
  if (cfg.family == Family::gr00t) return AttnMask::full;
  return cfg.first_frame_block ? AttnMask::teacher_forcing : AttnMask::block_causal;
}

}  // namespace emb
