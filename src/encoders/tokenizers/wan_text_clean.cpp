#include "encoders/tokenizers/wan_text_clean.hpp"

#include <utf8proc.h>

#include <cstdlib>

#include "encoders/tokenizers/html_unescape.hpp"
#include "encoders/tokenizers/unicode_text.hpp"

namespace emb::tokenizers {

namespace {

bool is_decimal_digit(char32_t c) { return utf8proc_category(utf8proc_int32_t(c)) == UTF8PROC_CATEGORY_ND; }

// \033\[((?:\d|;)*)([a-zA-Z]) removed (Python's \d: any decimal digit).
std::u32string remove_terminal_escapes(const std::u32string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == 0x1B && i + 1 < s.size() && s[i + 1] == U'[') {
      size_t k = i + 2;
      while (k < s.size() && (is_decimal_digit(s[k]) || s[k] == U';')) ++k;
      if (k < s.size() && ((s[k] >= U'a' && s[k] <= U'z') || (s[k] >= U'A' && s[k] <= U'Z'))) {
        i = k + 1;
        continue;
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

const char32_t* latin_ligature(char32_t c) {
  switch (c) {
    case 0x0132: return U"IJ";
    case 0x0133: return U"ij";
    case 0xFB00: return U"ff";
    case 0xFB01: return U"fi";
    case 0xFB02: return U"fl";
    case 0xFB03: return U"ffi";
    case 0xFB04: return U"ffl";
    case 0xFB05: return U"\u017Ft";
    case 0xFB06: return U"st";
    default: return nullptr;
  }
}

// ftfy's width map: U+3000 to a space, U+FF01..U+FFEF to their NFKC where that differs.
std::u32string standard_width(char32_t c) {
  if (c == 0x3000) return U" ";
  if (c < 0xFF01 || c > 0xFFEF) return std::u32string(1, c);
  std::string utf8;
  append_utf8(utf8, c);
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
                                          utf8proc_ssize_t(utf8.size()), &mapped,
                                          utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  std::u32string out(1, c);
  if (n > 0) out = decode_utf8(std::string(reinterpret_cast<const char*>(mapped), size_t(n)), "width map");
  std::free(mapped);
  return out;
}

bool is_removed_control(char32_t c) {
  return c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || (c >= 0x206A && c <= 0x206F) ||
         c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFC) || (c >= 0x1D173 && c <= 0x1D17A) ||
         (c >= 0xE0000 && c <= 0xE007F);
}

// One round of the character-level fixes, in fix_text's order.
std::u32string fix_round(const std::u32string& text) {
  const std::u32string s = remove_terminal_escapes(text);
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (const char32_t* parts = latin_ligature(c)) {
      out += parts;
      continue;
    }
    if (c == 0x3000 || (c >= 0xFF01 && c <= 0xFFEF)) {
      out += standard_width(c);
      continue;
    }
    if (c >= 0x2018 && c <= 0x201B) c = U'\'';
    if (c >= 0x201C && c <= 0x201F) c = U'"';
    if (c == U'\r' && i + 1 < s.size() && s[i + 1] == U'\n') continue;  // CRLF -> LF
    if (c == U'\r' || c == 0x2028 || c == 0x2029 || c == 0x85) c = U'\n';
    if (is_removed_control(c)) continue;
    out.push_back(c);
  }
  return decode_utf8(nfc(encode_utf8(out)), "NFC");
}

// Python's str.strip() of white space.
std::string strip(const std::string& text) {
  const std::u32string s = decode_utf8(text, "strip");
  size_t begin = 0, end = s.size();
  while (begin < end && is_white_space(s[begin])) ++begin;
  while (end > begin && is_white_space(s[end - 1])) --end;
  return encode_utf8(s.substr(begin, end - begin));
}

}  // namespace

std::string fix_text_subset(const std::string& text) {
  std::u32string s = decode_utf8(text, "text to clean");
  for (;;) {
    std::u32string fixed = fix_round(s);
    if (fixed == s) return encode_utf8(s);
    s = std::move(fixed);
  }
}

std::string wan_clean_text(const std::string& text) {
  const std::string basic = strip(html_unescape(html_unescape(fix_text_subset(text))));
  std::string collapsed;
  bool in_space = false;
  for (const char32_t c : decode_utf8(basic, "text to clean")) {
    if (is_white_space(c)) {
      in_space = true;
      continue;
    }
    if (in_space && !collapsed.empty()) collapsed += ' ';
    in_space = false;
    append_utf8(collapsed, c);
  }
  return collapsed;
}

}  // namespace emb::tokenizers
