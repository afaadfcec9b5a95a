// Qwen2's pre-tokenisation: the split pattern of Qwen2Tokenizer (PRETOKENIZE_REGEX) and of the
// Split pre-tokenizer its fast twin is converted to,
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*
//   |\s*[\r\n]+|\s+(?!\S)|\s+
// matched by hand rather than by a regex engine: each alternative's greedy/backtracking outcome
// has a closed form (see the .cpp), \s is exactly White_Space as in Python's `regex` module and
// Oniguruma (PCRE2 and ICU define it differently), and a long letter run costs linear time.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace emb::tokenizers {

// The pieces of `text` (NFC code points) as [begin, end) ranges, in order, covering it whole
// (every position starts a match of some alternative, so findall leaves no gaps).
std::vector<std::pair<size_t, size_t>> qwen2_pretokenize(const std::u32string& text);

}  // namespace emb::tokenizers
