// Added tokens (special or not) of a HF tokenizer and how they are cut out of a text before
// pre-tokenisation, as HF's fast tokenizer (AddedVocabulary) does it: leftmost match, longest
// at that position; tokens with normalized = false are matched on the raw text, the others on
// the NFC-normalised rest; lstrip/rstrip make a match swallow the white space on that side.
// `special` only matters for decoding (skip_special_tokens). single_word is refused at load.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emb::tokenizers {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool normalized = false;
  bool lstrip = false;
  bool rstrip = false;
};

// A part of a text: plain text to pre-tokenise, or one added token (`token` >= 0).
struct TextSegment {
  size_t begin, end;  // byte range in the text that was split
  int32_t token;      // added token id, or -1 for plain text
};

// Splits `text` at the tokens of `tokens` (a subset of one tokenizer's added tokens).
std::vector<TextSegment> split_added_tokens(const std::string& text, const std::vector<const AddedToken*>& tokens);

}  // namespace emb::tokenizers
