// The input deck (DESIGN.md "src/config"): `[section]` headers, `key = value` lines, `#`
// comments, `include = other.in` (relative to the including file) for shared settings,
// then `--set section.key=value` overrides from the command line. Every key is checked
// against the one schema (schema.cpp): type, default, unit, range or allowed set, doc.
// Errors are one line "FILE:LINE: message" thrown as emb::Error with exit code 2.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace emb {

class Deck {
 public:
  // Typed access by full key "section.key". Asking for a key that is not in the schema, or
  // with the wrong type, is an internal error (EMB_ASSERT), never a user error.
  int64_t get_int(const std::string& key) const;  // not of a key whose value is "auto" (is_auto)
  // Whether an integer key that takes "auto" (KeySpec::or_auto) has it: the caller chooses.
  bool is_auto(const std::string& key) const;
  double get_double(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  std::string get_string(const std::string& key) const;  // strings and enums
  std::vector<std::string> get_list(const std::string& key) const;  // comma-separated
  std::vector<int64_t> get_int_list(const std::string& key) const;

  // The canonical text of any schema key's value ("0.0002", "tiny_gr00t", "a.h5, b.h5").
  const std::string& text(const std::string& key) const;
  // True when the deck or the command line gave the key (not just the default).
  bool is_set(const std::string& key) const;
  // Where the value came from: "inputs/x.in:12", "--set", or "default".
  std::string origin(const std::string& key) const;
  // The deck file given on the command line, and its base name without extension.
  const std::string& path() const { return path_; }
  std::string stem() const;

  // Every schema key with its resolved value, grouped by section, each line commented with
  // its origin; parsing it again gives the same deck (written to outputs/<run>/deck.resolved).
  std::string resolved_text() const;

  struct Entry {
    std::string value;   // canonical text of the value
    std::string origin;  // as origin()
  };

 private:
  friend Deck load_deck(const std::string& path, const std::vector<std::string>& overrides);
  friend Deck load_deck_text(const std::string& text, const std::string& name,
                             const std::vector<std::string>& overrides);
  std::string path_;
  std::map<std::string, Entry> values_;  // every schema key, defaults included
};

// Parses `path` (following includes), applies `overrides` ("section.key=value"), validates
// every value and checks required keys. Throws emb::Error (exit code 2) on the first problem.
Deck load_deck(const std::string& path, const std::vector<std::string>& overrides = {});
// The same for a deck held in memory (a checkpoint's resolved deck), `name` standing for the
// file in messages ("ckpt/step_00000020.h5:deck:12: ...").
Deck load_deck_text(const std::string& text, const std::string& name, const std::vector<std::string>& overrides = {});

// Where an error about `key` points: "FILE:LINE" of the line that set it, "--set key=value",
// or the deck file when the key keeps its default.
std::string where_set(const Deck& deck, const std::string& key);
// where_set of the first of `keys` that the deck or the command line sets (a check that
// involves several keys points at the one the user wrote); the deck file when none is set.
std::string where_first_set(const Deck& deck, std::initializer_list<std::string> keys);

// `--help` text for the deck: every key with type, default, unit, range or choices and doc.
std::string deck_schema_help();

}  // namespace emb
