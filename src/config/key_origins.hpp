// Where each key of a resolved deck was set, so that a check made anywhere below the
// application names the line to change ("inputs/x.in:12: data.tokens_per_mb: ..."), as the
// deck's own errors do (where_set, config/deck.hpp). Taken from the Deck once, with RunConfig.
#pragma once
#include <initializer_list>
#include <map>
#include <string>

namespace emb {

class Deck;

class KeyOrigins {
 public:
  // "FILE:LINE" of the line that set `key`, "--set key=value", or the deck file when the key
  // keeps its default.
  std::string where(const std::string& key) const;
  // where() of the first of `keys` that the deck or the command line sets; the deck file when
  // none is set.
  std::string where_first(std::initializer_list<std::string> keys) const;
  // True when the deck or the command line gave `key`.
  bool is_set(const std::string& key) const { return set_at_.count(key) > 0; }

 private:
  friend KeyOrigins key_origins(const Deck& deck);
  std::string deck_path_;
  std::map<std::string, std::string> set_at_;  // key -> where_set, for the keys set
};

KeyOrigins key_origins(const Deck& deck);

}  // namespace emb
