// `embsim rl DECK [--set k=v ...]`: resolves the deck, loads the policy RL starts from, makes the
// run directory and runs the roles (rl/roles/rl_roles.hpp).
#pragma once
#include <string>
#include <vector>

#include "comm/world.hpp"

namespace emb {

// Collective over the world: returns summary.json's path.
std::string run_rl(const World& world, const std::string& deck_path, const std::vector<std::string>& sets,
                   const std::string& mjcf_dir);

}  // namespace emb
