#include "rl/roles/rl_options.hpp"

namespace emb {

const char* rl_mode_name(RlMode m) {
  switch (m) {
    case RlMode::sync: return "sync";
    case RlMode::async_rollout: return "async_rollout";
    case RlMode::async: return "async";
  }
  return "";
}

}  // namespace emb
