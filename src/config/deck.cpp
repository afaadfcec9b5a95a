#include "config/deck.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "config/key_origins.hpp"
#include "config/schema.hpp"
#include "config/value.hpp"
#include "core/error.hpp"

namespace emb {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void input_error(const std::string& where, const std::string& message) {
  throw Error(str(where, ": ", message), kExitInput);
}

bool is_identifier(const std::string& text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string unknown_key_message(const std::string& key) {
  constexpr size_t kLongestKey = 64;  // no schema key is longer: nothing to suggest, and no quadratic search
  if (key.size() > kLongestKey) return str("unknown key ", clipped(key), " (embtrain --help lists every key)");
  std::string suggestion = closest_key(key);
  if (!suggestion.empty()) return str("unknown key ", key, " (did you mean ", suggestion, "?)");
  return str("unknown key ", key, " (embtrain --help lists every key)");
}

// Reads a deck file and, in place, the files it includes: each value read replaces the one
// read before it, so an include is overridden by the including file's later lines.
class DeckReader {
 public:
  std::map<std::string, Deck::Entry> values;

  // `included_at` is the "FILE:LINE" of the include line, "" for the deck itself.
  void read(const std::string& path, const std::string& included_at) {
    std::error_code ignored;  // an unresolvable path is reported when it fails to open
    std::string identity = fs::weakly_canonical(fs::absolute(path), ignored).string();
    for (std::size_t i = 0; i < open_.size(); ++i) {
      if (open_[i].identity != identity) continue;
      std::string chain;
      for (std::size_t j = i; j < open_.size(); ++j) chain += open_[j].shown + " -> ";
      input_error(included_at, str("include cycle: ", chain, clipped_path(path)));
    }
    if (open_.size() >= kMaxIncludeDepth)
      input_error(included_at, str("includes nested deeper than ", kMaxIncludeDepth, " files (", clipped_path(path), ")"));
    std::error_code status_error;
    const fs::file_status status = fs::status(path, status_error);
    // Only regular files: /dev/zero or a FIFO would be read forever.
    const bool regular = fs::is_regular_file(status), exists = fs::exists(status);
    std::ifstream in;
    if (regular) in.open(path);
    if (!in.is_open()) {
      std::string reason = fs::is_directory(status) ? "it is a directory"
                           : regular              ? std::strerror(errno)  // e.g. Permission denied
                           : exists               ? "not a regular file"
                                                  : status_error.message();
      if (included_at.empty()) input_error(clipped_path(path), str("cannot open the deck file: ", reason));
      input_error(included_at, str("cannot open the included file ", clipped_path(path), ": ", reason));
    }
    open_.push_back({identity, path});
    read_lines(in, path);
    open_.pop_back();
  }

  // A deck held in memory (a checkpoint's resolved deck), named `name` in messages; it
  // includes no files (a resolved deck has none).
  void read_text(const std::string& text, const std::string& name) {
    std::istringstream in(text);
    read_lines(in, name);
  }

 private:
  static constexpr size_t kMaxIncludeDepth = 32;
  struct OpenFile {
    std::string identity;  // canonical path, to recognise a cycle however it is spelt
    std::string shown;     // as the user wrote it, for messages
  };
  std::vector<OpenFile> open_;

  void read_lines(std::istream& in, const std::string& path) {
    std::map<std::string, std::string> first_set_at;  // key -> "FILE:LINE" in this file
    std::string section;  // "" before the first header; an included file starts its own
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      std::string where = str(path, ":", number);
      if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
      std::string text = trim(line.substr(0, line.find('#')));
      if (text.empty()) continue;
      if (text.front() == '[') {
        section = read_section_header(text, where);
        continue;
      }
      std::size_t equals = text.find('=');
      std::string name = trim(text.substr(0, equals));
      if (equals == std::string::npos || !is_identifier(name)) malformed(text, where);
      std::string value = trim(text.substr(equals + 1));
      if (name == "include") {
        if (value.empty()) input_error(where, "include needs a file name");
        fs::path target = fs::path(path).parent_path() / value;  // an absolute value stays itself
        read(target.lexically_normal().string(), where);
        continue;
      }
      if (section.empty())
        input_error(where, str("key '", name, "' comes before any [section] header"));
      std::string key = section + "." + name;
      const KeySpec* spec = find_key_spec(key);
      if (!spec) input_error(where, unknown_key_message(key));
      auto first = first_set_at.emplace(key, where);
      if (!first.second)
        input_error(where, str("duplicate key ", key, " (first set at ", first.first->second, ")"));
      try {
        values[key] = Deck::Entry{canonical_value(*spec, value), where};
      } catch (const Error& e) {
        input_error(where, e.what());
      }
    }
  }

  static std::string read_section_header(const std::string& text, const std::string& where) {
    std::string section = trim(text.substr(1, text.size() - 2));
    if (text.back() != ']' || !is_identifier(section)) malformed(text, where);
    if (is_deck_section(section)) return section;
    std::string suggestion = closest_section(section);
    if (!suggestion.empty())
      input_error(where, str("unknown section [", clipped(section), "] (did you mean [", suggestion, "]?)"));
    input_error(where, str("unknown section [", clipped(section), "]; sections are ", join(deck_sections())));
  }

  [[noreturn]] static void malformed(const std::string& text, const std::string& where) {
    input_error(where, str("malformed line ", quoted(text),
                           ": expected [section], key = value, include = FILE or # comment"));
  }
};

// One `--set section.key=value`.
void apply_override(const std::string& text, std::map<std::string, Deck::Entry>* values) {
  std::string where = "--set " + text;
  std::size_t equals = text.find('=');
  if (equals == std::string::npos) input_error(where, "expected section.key=value");
  std::string key = trim(text.substr(0, equals));
  const KeySpec* spec = find_key_spec(key);
  if (!spec) input_error(where, unknown_key_message(key));
  try {
    (*values)[key] = Deck::Entry{canonical_value(*spec, trim(text.substr(equals + 1))), "--set"};
  } catch (const Error& e) {
    input_error(where, e.what());
  }
}

// What a required key takes: its choices, or its doc.
std::string required_hint(const KeySpec& spec) {
  return spec.choices.empty() ? spec.doc : "one of " + join(spec.choices);
}

// The stored value of `key`, which must be a schema key of one of `types`.
const std::string& checked_value(const std::map<std::string, Deck::Entry>& values,
                                 const std::string& key, std::initializer_list<KeyType> types) {
  const KeySpec* spec = find_key_spec(key);
  EMB_ASSERT(spec != nullptr);
  bool type_matches = false;
  for (KeyType type : types) type_matches = type_matches || spec->type == type;
  EMB_ASSERT(type_matches);
  return values.at(key).value;
}


}  // namespace

namespace {

// Every schema key's entry from `reader`'s values with `overrides` applied, every key checked.
std::map<std::string, Deck::Entry> resolved_values(DeckReader& reader, const std::string& path,
                                                   const std::vector<std::string>& overrides) {
  for (const std::string& text : overrides) apply_override(text, &reader.values);
  std::map<std::string, Deck::Entry> values;
  for (const KeySpec& spec : deck_schema()) {
    auto found = reader.values.find(spec.key);
    if (found != reader.values.end()) {
      values[spec.key] = found->second;
      continue;
    }
    const bool waived = !spec.unless.empty() && reader.values.count(spec.unless) &&
                        !reader.values.at(spec.unless).value.empty();
    if (spec.required && !waived)
      input_error(path, str("missing required key ", spec.key, ": add '", spec.name(), " = ...' under [",
                            spec.section(), "] (", required_hint(spec), ")",
                            spec.unless.empty() ? "" : str(" or set ", spec.unless)));
    values[spec.key] = Deck::Entry{spec.default_value, "default"};
  }
  return values;
}

}  // namespace

Deck load_deck(const std::string& path, const std::vector<std::string>& overrides) {
  DeckReader reader;
  reader.read(path, "");
  Deck deck;
  deck.path_ = path;
  deck.values_ = resolved_values(reader, path, overrides);
  return deck;
}

Deck load_deck_text(const std::string& text, const std::string& name, const std::vector<std::string>& overrides) {
  DeckReader reader;
  reader.read_text(text, name);
  Deck deck;
  deck.path_ = name;
  deck.values_ = resolved_values(reader, name, overrides);
  return deck;
}

int64_t Deck::get_int(const std::string& key) const {
  int64_t value = 0;
  EMB_ASSERT(parse_int(checked_value(values_, key, {KeyType::integer}), &value));
  return value;
}

bool Deck::is_auto(const std::string& key) const {
  return checked_value(values_, key, {KeyType::integer}) == "auto";
}

double Deck::get_double(const std::string& key) const {
  double value = 0;
  EMB_ASSERT(parse_real(checked_value(values_, key, {KeyType::real}), &value));
  return value;
}

bool Deck::get_bool(const std::string& key) const {
  bool value = false;
  EMB_ASSERT(parse_bool(checked_value(values_, key, {KeyType::boolean}), &value));
  return value;
}

std::string Deck::get_string(const std::string& key) const {
  return checked_value(values_, key, {KeyType::string, KeyType::enumeration});
}

std::vector<std::string> Deck::get_list(const std::string& key) const {
  return split_list(checked_value(values_, key, {KeyType::list}));
}

std::vector<int64_t> Deck::get_int_list(const std::string& key) const {
  std::vector<int64_t> numbers;
  for (const std::string& item : split_list(checked_value(values_, key, {KeyType::int_list}))) {
    numbers.push_back(0);
    EMB_ASSERT(parse_int(item, &numbers.back()));
  }
  return numbers;
}

const std::string& Deck::text(const std::string& key) const {
  auto found = values_.find(key);
  EMB_ASSERT(found != values_.end());
  return found->second.value;
}

bool Deck::is_set(const std::string& key) const { return origin(key) != "default"; }

std::string Deck::origin(const std::string& key) const {
  auto found = values_.find(key);
  EMB_ASSERT(found != values_.end());
  return found->second.origin;
}

std::string where_set(const Deck& deck, const std::string& key) {
  const std::string origin = deck.origin(key);
  if (origin == "default") return deck.path();
  return origin == "--set" ? str("--set ", key, "=", clipped(deck.text(key))) : origin;
}

std::string where_first_set(const Deck& deck, std::initializer_list<std::string> keys) {
  for (const std::string& key : keys)
    if (deck.is_set(key)) return where_set(deck, key);
  return deck.path();
}

KeyOrigins key_origins(const Deck& deck) {
  KeyOrigins o;
  o.deck_path_ = deck.path();
  for (const KeySpec& spec : deck_schema())
    if (deck.is_set(spec.key)) o.set_at_[spec.key] = where_set(deck, spec.key);
  return o;
}

std::string KeyOrigins::where(const std::string& key) const {
  auto found = set_at_.find(key);
  return found == set_at_.end() ? deck_path_ : found->second;
}

std::string KeyOrigins::where_first(std::initializer_list<std::string> keys) const {
  for (const std::string& key : keys)
    if (is_set(key)) return where(key);
  return deck_path_;
}

std::string Deck::stem() const { return fs::path(path_).stem().string(); }

std::string Deck::resolved_text() const {
  std::string text = str("# embtrain deck ", path_, " resolved: every key, commented with its origin\n");
  std::string section;
  for (const KeySpec& spec : deck_schema()) {
    if (spec.section() != section) {
      section = spec.section();
      text += str("\n[", section, "]\n");
    }
    const Entry& entry = values_.at(spec.key);
    if (spec.required && entry.value.empty())  // waived (KeySpec::unless): a value it could not parse back
      text += str("# ", spec.name(), " is unset: ", spec.unless, " gives it\n");
    else
      text += str(spec.name(), " = ", entry.value, "   # ", entry.origin, "\n");
  }
  return text;
}

}  // namespace emb
