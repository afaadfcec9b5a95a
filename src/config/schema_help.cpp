// deck_schema_help() (declared in deck.hpp): the schema as `embtrain --help` shows it.
#include "config/deck.hpp"
#include "config/schema.hpp"
#include "config/value.hpp"
#include "core/error.hpp"

namespace emb {

namespace {

std::string type_text(const KeySpec& spec) {
  if (spec.type == KeyType::enumeration) return "enum: " + join(spec.choices, " | ");
  if (spec.type == KeyType::int_list && spec.list_size != 0)
    return str("int_list of ", spec.list_size);
  return spec.or_auto ? str(key_type_name(spec.type), " or auto") : std::string(key_type_name(spec.type));
}

// "(int, default 4096, tokens, range [16, 1000000000])"
std::string attributes(const KeySpec& spec) {
  std::string text = type_text(spec);
  if (!spec.required)
    text += str(", default \"", spec.default_value, "\"");
  else
    text += spec.unless.empty() ? std::string(", required") : str(", required unless ", spec.unless, " is set");
  if (!spec.unit.empty()) text += ", " + spec.unit;
  bool numeric = spec.type == KeyType::integer || spec.type == KeyType::real ||
                 spec.type == KeyType::int_list;
  if (numeric && !spec.range.text().empty()) text += ", range " + spec.range.text();
  return "(" + text + ")";
}

}  // namespace

std::string deck_schema_help() {
  std::string text =
      "Deck keys: write 'key = value' under its [section] in the deck, or override on the\n"
      "command line with --set section.key=value. '#' starts a comment; 'include = FILE'\n"
      "reads FILE (relative to the including file) at that point.\n";
  std::string section;
  for (const KeySpec& spec : deck_schema()) {
    if (spec.section() != section) {
      section = spec.section();
      text += str("\n[", section, "]\n");
    }
    text += str("  ", spec.name(), "  ", attributes(spec), "\n      ", spec.doc, "\n");
  }
  return text;
}

}  // namespace emb
