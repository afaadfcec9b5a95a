#include "encoders/tokenizers/unicode_text.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "core/error.hpp"

namespace emb::tokenizers {

std::u32string decode_utf8(const std::string& text, const std::string& what) {
  std::u32string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(bytes + pos, utf8proc_ssize_t(text.size() - pos), &c);
    EMB_CHECK(n > 0, what, ": invalid UTF-8 at byte ", pos);
    out.push_back(char32_t(c));
    pos += size_t(n);
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  utf8proc_uint8_t buf[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(utf8proc_int32_t(c), buf);
  out.append(reinterpret_cast<const char*>(buf), size_t(n));
}

std::string encode_utf8(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char32_t c : text) append_utf8(out, c);
  return out;
}

std::string nfc(const std::string& text) {
  // Plain ASCII is its own NFC; skipping utf8proc there keeps prompts and English fast.
  bool ascii = true;
  for (const char ch : text) ascii = ascii && static_cast<unsigned char>(ch) < 0x80;
  if (ascii) return text;
  utf8proc_uint8_t* mapped = nullptr;
  // No UTF8PROC_NULLTERM: the length is explicit, so text holding U+0000 is normalised whole.
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), utf8proc_ssize_t(text.size()),
                   &mapped, utf8proc_option_t(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  EMB_CHECK(n >= 0, "NFC normalisation failed: ", utf8proc_errmsg(n));
  const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(mapped, &std::free);
  return std::string(reinterpret_cast<const char*>(mapped), size_t(n));
}

namespace {

utf8proc_category_t category(char32_t c) { return utf8proc_category(utf8proc_int32_t(c)); }

// Derived property Cased, as far as utf8proc exposes it: the cased letter categories and any
// character with a case mapping (Other_Lowercase/Other_Uppercase letters without a mapping,
// such as U+00AA, are the gap).
bool is_cased(char32_t c) {
  const auto cat = category(c);
  if (cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT) return true;
  const auto i = utf8proc_int32_t(c);
  return utf8proc_tolower(i) != i || utf8proc_toupper(i) != i;
}

// Derived property Case_Ignorable: marks, format controls, modifier letters and symbols, and
// the Word_Break MidLetter/MidNumLet/Single_Quote characters.
bool is_case_ignorable(char32_t c) {
  switch (category(c)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      break;
  }
  switch (c) {
    case U'\'': case U'.': case U':': case U'\u00B7': case U'\u0387': case U'\u055F':
    case U'\u05F4': case U'\u2018': case U'\u2019': case U'\u2024': case U'\u2027':
    case U'\uFE13': case U'\uFE52': case U'\uFE55': case U'\uFF07': case U'\uFF0E': case U'\uFF1A':
      return true;
    default:
      return false;
  }
}

// U+03A3 lowers to final sigma U+03C2 when a cased letter precedes it and none follows
// (case-ignorable characters skipped on both sides), as Python's str.lower() decides.
bool is_final_sigma(const std::u32string& text, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(text[j - 1])) --j;
  if (j == 0 || !is_cased(text[j - 1])) return false;
  size_t k = i + 1;
  while (k < text.size() && is_case_ignorable(text[k])) ++k;
  return k == text.size() || !is_cased(text[k]);
}

}  // namespace

bool is_letter(char32_t c) {
  switch (category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return true;
    default:
      return false;
  }
}

bool is_number(char32_t c) {
  const auto cat = category(c);
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

bool is_white_space(char32_t c) {
  // PropList.txt's White_Space, unchanged since Unicode 6.3.
  if (c >= 0x09 && c <= 0x0D) return true;
  if (c >= 0x2000 && c <= 0x200A) return true;
  switch (c) {
    case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
    case 0x205F: case 0x3000:
      return true;
    default:
      return false;
  }
}

std::u32string python_lower(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c < 0x80) {
      out.push_back(c >= U'A' && c <= U'Z' ? c + 32 : c);
    } else if (c == 0x0130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE: SpecialCasing's full mapping
      out.push_back(U'i');
      out.push_back(0x0307);
    } else if (c == 0x03A3) {
      out.push_back(is_final_sigma(text, i) ? 0x03C2 : 0x03C3);
    } else {
      out.push_back(char32_t(utf8proc_tolower(utf8proc_int32_t(c))));
    }
  }
  return out;
}

}  // namespace emb::tokenizers
