#include "encoders/tokenizers/qwen2_pretokenizer.hpp"

#include "encoders/tokenizers/unicode_text.hpp"

namespace emb::tokenizers {

namespace {

bool is_newline(char32_t c) { return c == U'\r' || c == U'\n'; }

// The contraction alternative (?i:'s|'t|'re|'ve|'m|'ll|'d): its length at i, 0 when none.
// Case-insensitive matching folds U+017F LATIN SMALL LETTER LONG S to 's' as well.
size_t contraction_at(const std::u32string& t, size_t i) {
  if (t[i] != U'\'' || i + 1 >= t.size()) return 0;
  const auto lower = [&](size_t k) -> char32_t {
    if (k >= t.size()) return 0;
    const char32_t c = t[k];
    if (c == 0x017F) return U's';
    return c >= U'A' && c <= U'Z' ? c + 32 : c;
  };
  const char32_t a = lower(i + 1);
  if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
  const char32_t b = lower(i + 2);
  if ((a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l')) return 3;
  return 0;
}

size_t letters_end(const std::u32string& t, size_t k) {
  while (k < t.size() && is_letter(t[k])) ++k;
  return k;
}

bool is_symbol(char32_t c) { return !is_white_space(c) && !is_letter(c) && !is_number(c); }

// End of the match that starts at i; every position starts one (see the header).
size_t piece_end(const std::u32string& t, size_t i) {
  const size_t n = t.size();
  const char32_t c = t[i];
  if (const size_t len = contraction_at(t, i)) return i + len;
  // [^\r\n\p{L}\p{N}]?\p{L}+ : one optional non-letter, non-digit, non-newline lead-in.
  if (is_letter(c)) return letters_end(t, i);
  if (!is_newline(c) && !is_number(c) && i + 1 < n && is_letter(t[i + 1])) return letters_end(t, i + 1);
  if (is_number(c)) return i + 1;  // \p{N}: one digit per piece
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*' : a run of symbols, led by at most one space, then newlines.
  size_t k = i;
  if (c == U' ' && i + 1 < n && is_symbol(t[i + 1])) k = i + 1;
  if (is_symbol(t[k])) {
    while (k < n && is_symbol(t[k])) ++k;
    while (k < n && is_newline(t[k])) ++k;
    return k;
  }
  // The rest start at white space; [i, run) is the whole run of it.
  size_t run = i;
  while (run < n && is_white_space(t[run])) ++run;
  // \s*[\r\n]+ : \s* backs off until [\r\n]+ can match, so the piece ends after the run's
  // last newline.
  for (size_t j = run; j > i; --j) {
    if (is_newline(t[j - 1])) return j;
  }
  // \s+(?!\S) : the whole run at the end of the text, else all of it but its last character
  // (which then leads the next piece), provided that leaves one.
  if (run == n) return run;
  if (run - i >= 2) return run - 1;
  return run;  // \s+ : a single white-space character before a non-space
}

}  // namespace

std::vector<std::pair<size_t, size_t>> qwen2_pretokenize(const std::u32string& text) {
  std::vector<std::pair<size_t, size_t>> pieces;
  for (size_t i = 0; i < text.size();) {
    const size_t end = piece_end(text, i);
    pieces.emplace_back(i, end);
    i = end;
  }
  return pieces;
}

}  // namespace emb::tokenizers
