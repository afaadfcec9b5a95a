// Deck values as text: checking a user's text against its KeySpec and turning it into the
// canonical text the Deck stores (and deck.resolved shows), and reading canonical text back.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/schema.hpp"

namespace emb {

// Checks `text` against `spec` (type, range with unit, choices, list size) and returns its
// canonical text. Throws emb::Error (exit code 2) whose message names the key but not the
// place ("train.steps: expected an integer, got 'abc'"); the caller prefixes FILE:LINE.
std::string canonical_value(const KeySpec& spec, const std::string& text);

// Strict readers of a whole string; false when `text` is not exactly one such value.
bool parse_int(const std::string& text, int64_t* out);
bool parse_real(const std::string& text, double* out);  // finite numbers only
bool parse_bool(const std::string& text, bool* out);    // true/false, on/off, yes/no, 1/0

// Comma-separated items, each trimmed; "" is the empty list.
std::vector<std::string> split_list(const std::string& text);

// The shortest decimal text that reads back as exactly `x` ("0.0003", "1e-08"); whole
// numbers below 1e15 in full ("25", "1000000000").
std::string format_number(double x);

// The items with `separator` between them: join({"a", "b"}) == "a, b".
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

// `text` without leading and trailing blanks.
std::string trim(const std::string& text);

}  // namespace emb
