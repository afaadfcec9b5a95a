#include "config/deck.hpp"
#include "model/plan.hpp"
#include "model/presets.hpp"
#include "train/commands.hpp"

namespace emb {

std::string plan_report(const Deck& deck, int world_size) {
  const int64_t ranks = deck.get_int("train.ranks");
  return plan_text(make_plan(model_config_from_deck(deck), ranks > 0 ? int(ranks) : world_size,
                             deck.get_int("data.tokens_per_mb")));
}

}  // namespace emb
