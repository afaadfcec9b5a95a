// The one schema of the input deck: every key the deck, `--set` and `--help` know, with its
// type, default, unit, allowed range or choices and a one-line doc. Keys are full names
// "section.key", declared grouped by section in the order `--help` and deck.resolved show.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace emb {

enum class KeyType { integer, real, boolean, string, enumeration, list, int_list };

// "int", "double", "bool", "string", "enum", "list", "int_list" (as --help prints it).
const char* key_type_name(KeyType type);

// Allowed numbers: lo and hi each inclusive or open; unbounded sides are infinite.
struct Range {
  double lo, hi;
  bool lo_open = false, hi_open = false;

  bool contains(double x) const;
  std::string text() const;  // "[0, 1)", ">= 1", "> 0", or "" when unbounded
};
Range any_number();
Range at_least(double lo);               // [lo, inf)
Range above(double lo);                  // (lo, inf)
Range between(double lo, double hi);     // [lo, hi]
Range from_below(double lo, double hi);  // [lo, hi)

struct KeySpec {
  std::string key;                   // "section.key"
  KeyType type = KeyType::string;
  std::string default_value;         // canonical text; unused when required
  bool required = false;
  std::string unless;                // required unless this key is set ("" = always required)
  std::string unit;                  // "" when the value has none
  Range range = any_number();        // numbers; each element of an int_list
  std::vector<std::string> choices;  // enumeration
  std::size_t list_size = 0;         // int_list: exact element count, 0 = any
  bool or_auto = false;              // integer: the word "auto" too (the program chooses the number)
  std::string doc;

  std::string section() const;  // "train" of "train.steps"
  std::string name() const;     // "steps" of "train.steps"
};

// Every key in declaration order.
const std::vector<KeySpec>& deck_schema();
// The sections in declaration order: run, model, data, train, comm.
std::vector<std::string> deck_sections();
// nullptr when `key` is not in the schema.
const KeySpec* find_key_spec(const std::string& key);
bool is_deck_section(const std::string& section);

// The schema key a misspelt `key` most likely meant, or "" when none is close: the same
// name in another section (`train.seed` -> run.seed), else the nearest full key by edit
// distance (`train.stpes` -> train.steps).
std::string closest_key(const std::string& key);
// The same for a section name (`trian` -> train), or "".
std::string closest_section(const std::string& section);

// Levenshtein distance (insertions, deletions, substitutions each cost 1).
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace emb
