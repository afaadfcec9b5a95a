// Prints the --plan report of a deck's model for a rank count (what `embtrain DECK --plan`
// will print once the trainer wires it):  model_plan_tool DECK [RANKS]
#include <cstdio>
#include <string>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "model/plan.hpp"
#include "model/presets.hpp"

int main(int argc, char** argv) {
  using namespace emb;
  try {
    EMB_CHECK(argc >= 2, "usage: model_plan_tool DECK [RANKS]");
    const Deck deck = load_deck(argv[1]);
    const int ranks = argc >= 3 ? std::stoi(argv[2]) : std::max<int>(1, int(deck.get_int("train.ranks")));
    const PlanReport plan = make_plan(model_config_from_deck(deck), ranks, deck.get_int("data.tokens_per_mb"));
    std::fputs(plan_text(plan).c_str(), stdout);
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.exit_code();
  }
}
