// The one place a Deck becomes a RunConfig (config/run_config.hpp): each key read once, by the
// parser of its section, into its typed field; the model's preset with its [model] overrides,
// validated (errors name the deck line). Adding a key is its schema entry, its field and one
// line here.
#pragma once
#include "config/deck.hpp"
#include "config/run_config.hpp"

namespace emb {

// Throws emb::Error (exit code 2) naming the deck line for a model that cannot be built.
RunConfig run_config_from_deck(const Deck& deck);

}  // namespace emb
