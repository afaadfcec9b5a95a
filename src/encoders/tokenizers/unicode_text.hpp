// Code-point level Unicode for the tokenizers. Upstream tokenizes Python str objects, so the
// C++ side works on code points too: UTF-8 that a Python str could not hold is refused, and the
// character classes are the ones Python's `regex` module and Oniguruma (the engine behind HF's
// Rust tokenizers) give \p{L}, \p{N} and \s.
#pragma once
#include <string>

namespace emb::tokenizers {

// Code points of `text`; throws emb::Error "<what>: invalid UTF-8 at byte N" on bytes that
// are not UTF-8 (overlong forms, surrogates and values past U+10FFFF included).
std::u32string decode_utf8(const std::string& text, const std::string& what);
void append_utf8(std::string& out, char32_t c);
std::string encode_utf8(const std::u32string& text);

// Unicode canonical composition (NFC), what unicodedata.normalize("NFC", ·) and HF's NFC
// normalizer do. Input must be valid UTF-8.
std::string nfc(const std::string& text);

bool is_letter(char32_t c);       // general category L*  (\p{L})
bool is_number(char32_t c);       // general category N*  (\p{N})
// The White_Space property: \s of Python's `regex` module and of Oniguruma, Rust's
// char::is_whitespace. (PCRE2's \s and str.isspace() differ at U+0085 and U+001C..U+001F.)
bool is_white_space(char32_t c);

// Python's str.lower(): simple lowercase mappings plus the two rules Python adds, the full
// mapping of U+0130 (to "i" + U+0307) and the final-sigma context of U+03A3.
std::u32string python_lower(const std::u32string& text);

}  // namespace emb::tokenizers
