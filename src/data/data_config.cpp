#include "data/data_config.hpp"

#include "config/deck.hpp"

namespace emb {

DataConfig data_config_from_deck(const Deck& deck) {
  DataConfig c;
  c.paths = deck.get_list("data.paths");
  c.packing = deck.get_string("data.packing") == "on";
  c.tokens_per_mb = deck.get_int("data.tokens_per_mb");
  c.pad_context = deck.get_int("data.pad_context");
  c.lookahead = deck.get_int("data.lookahead");
  c.prefetch = int(deck.get_int("data.prefetch"));
  c.mpio_transfer = mpio_transfer_from_name(deck.get_string("data.mpio_transfer"));
  c.shuffle_buffer = deck.get_int("data.shuffle_buffer");
  c.view = deck.is_set("data.view") ? deck.get_string("data.view") : "";
  c.vl_backbone = deck.get_string("data.vl_backbone");
  c.vl_augment = deck.get_string("data.vl_augment") == "on";
  c.global_batch = deck.get_int("train.global_batch");
  c.seed = uint64_t(deck.get_int("run.seed"));
  return c;
}

}  // namespace emb
