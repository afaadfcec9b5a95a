#include "encoders/tokenizers/html_unescape.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "encoders/tokenizers/unicode_text.hpp"

namespace emb::tokenizers {

namespace {

#include "encoders/tokenizers/html_entities.inc"

const std::unordered_map<std::string, std::string>& named_references() {
  static const std::unordered_map<std::string, std::string> table(std::begin(kHtmlNamedReferences),
                                                                   std::end(kHtmlNamedReferences));
  return table;
}

bool is_hex(char32_t c) { return (c >= U'0' && c <= U'9') || (c >= U'a' && c <= U'f') || (c >= U'A' && c <= U'F'); }

// The character a numeric reference stands for, "" when it stands for nothing.
std::string numeric_reference(const std::u32string& digits, int base) {
  constexpr uint64_t kBeyond = 0x110000;  // anything larger behaves the same
  uint64_t value = 0;
  for (const char32_t c : digits) {
    const uint64_t d = c <= U'9' ? c - U'0' : (c | 0x20) - U'a' + 10;
    value = std::min<uint64_t>(value * uint64_t(base) + d, kBeyond);
  }
  for (const auto& [from, to] : kHtmlNumericFixups) {
    if (value == from) return encode_utf8(std::u32string(1, to));
  }
  if ((value >= 0xD800 && value <= 0xDFFF) || value >= kBeyond) return "\xEF\xBF\xBD";
  if (std::find(std::begin(kHtmlDroppedCodePoints), std::end(kHtmlDroppedCodePoints), char32_t(value)) !=
      std::end(kHtmlDroppedCodePoints)) {
    return "";
  }
  return encode_utf8(std::u32string(1, char32_t(value)));
}

// A name character: html.unescape's [^\t\n\f <&#;].
bool is_name_char(char32_t c) {
  return c != U'\t' && c != U'\n' && c != U'\f' && c != U' ' && c != U'<' && c != U'&' && c != U'#' && c != U';';
}

}  // namespace

std::string html_unescape(const std::string& text) {
  if (text.find('&') == std::string::npos) return text;
  const std::u32string s = decode_utf8(text, "html_unescape");
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != U'&') {
      append_utf8(out, s[i++]);
      continue;
    }
    const size_t start = i + 1;
    // &#123; / &#x1F; (the ';' optional)
    if (start < s.size() && s[start] == U'#') {
      const bool hex = start + 1 < s.size() && (s[start + 1] == U'x' || s[start + 1] == U'X');
      size_t k = start + (hex ? 2 : 1);
      const size_t first = k;
      while (k < s.size() && (hex ? is_hex(s[k]) : (s[k] >= U'0' && s[k] <= U'9'))) ++k;
      if (k > first) {
        out += numeric_reference(s.substr(first, k - first), hex ? 16 : 10);
        i = k < s.size() && s[k] == U';' ? k + 1 : k;
        continue;
      }
      append_utf8(out, s[i++]);
      continue;
    }
    // &name; : up to 32 name characters and an optional ';'
    size_t k = start;
    while (k < s.size() && k - start < 32 && is_name_char(s[k])) ++k;
    if (k == start) {
      append_utf8(out, s[i++]);
      continue;
    }
    if (k < s.size() && s[k] == U';') ++k;
    const std::string name = encode_utf8(s.substr(start, k - start));
    i = k;
    const auto& table = named_references();
    const auto it = table.find(name);
    if (it != table.end()) {
      out += it->second;
      continue;
    }
    // The longest known prefix of at least two characters, the rest kept as text.
    const std::u32string name32 = s.substr(start, k - start);
    bool found = false;
    for (size_t len = name32.size() - 1; len >= 2 && !found; --len) {
      const auto prefix = table.find(encode_utf8(name32.substr(0, len)));
      if (prefix != table.end()) {
        out += prefix->second + encode_utf8(name32.substr(len));
        found = true;
      }
    }
    if (!found) out += "&" + name;
  }
  return out;
}

}  // namespace emb::tokenizers
