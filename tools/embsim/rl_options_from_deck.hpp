// `embsim rl DECK`: the RL options (rl/roles/rl_options.hpp) from the deck's [rl] keys and its RunConfig.
#pragma once
#include "config/deck.hpp"
#include "config/run_config.hpp"
#include "rl/roles/rl_options.hpp"

namespace emb {

// Throws emb::Error (one line naming the key) for values that cannot work together.
// `run` is the deck's RunConfig (app/run_config_from_deck.hpp).
RlOptions rl_options_from_deck(const Deck& deck, const RunConfig& run);

}  // namespace emb
