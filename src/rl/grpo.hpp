// Group-relative advantages (GRPO; CLOSED_LOOP.md "PPO with GAE and a value head (or GRPO
// without one)"). G episodes start from the same initial state (the same reset key) and differ
// only in the policy's noise; each episode's advantage is its return against the group's:
//   A_i = (R_i − mean_j R_j) / (std_j R_j + 1e-8)      (std over the group, population)
// Every transition of episode i takes A_i. The group mean is an exact baseline for that
// initial state, which a value head on a weak policy's few states is not. A group whose
// returns are all equal gives A = 0 everywhere: it carries no signal.
#pragma once
#include <string>
#include <vector>

namespace emb {

// rl.advantage: gae = GAE with the value head; grpo = group-relative episode returns.
enum class Advantage { gae, grpo };
Advantage advantage_from_name(const std::string& name);

// The advantages of a group's episodes from their returns (at least one).
std::vector<float> group_advantages(const std::vector<double>& returns);

}  // namespace emb
