#include "encoders/tokenizers/added_tokens.hpp"

#include "encoders/tokenizers/unicode_text.hpp"

namespace emb::tokenizers {

namespace {

// Start of the white space (Rust's char::is_whitespace = White_Space) that ends text[from, at).
size_t white_space_before(const std::string& text, size_t from, size_t at) {
  const std::u32string head = decode_utf8(text.substr(from, at - from), "added-token split");
  size_t k = head.size();
  while (k > 0 && is_white_space(head[k - 1])) --k;
  std::string kept;
  for (size_t i = 0; i < k; ++i) append_utf8(kept, head[i]);
  return from + kept.size();
}

// End of the white space that starts text[at, ...).
size_t white_space_after(const std::string& text, size_t at) {
  const std::u32string tail = decode_utf8(text.substr(at), "added-token split");
  std::string eaten;
  for (size_t k = 0; k < tail.size() && is_white_space(tail[k]); ++k) append_utf8(eaten, tail[k]);
  return at + eaten.size();
}

}  // namespace

std::vector<TextSegment> split_added_tokens(const std::string& text, const std::vector<const AddedToken*>& tokens) {
  std::vector<TextSegment> segments;
  bool first_byte[256] = {};  // a cheap filter: most positions cannot start any token
  for (const AddedToken* t : tokens) {
    if (!t->content.empty()) first_byte[static_cast<unsigned char>(t->content[0])] = true;
  }
  size_t done = 0;  // text[0, done) is already in segments
  size_t pos = 0;
  while (pos < text.size()) {
    if (!first_byte[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    // The longest token starting at pos (valid UTF-8 tokens only match at character starts).
    const AddedToken* best = nullptr;
    for (const AddedToken* t : tokens) {
      if (t->content.empty() || t->content.size() > text.size() - pos) continue;
      if (text.compare(pos, t->content.size(), t->content) != 0) continue;
      if (!best || t->content.size() > best->content.size()) best = t;
    }
    if (!best) {
      ++pos;
      continue;
    }
    size_t begin = pos, end = pos + best->content.size();
    if (best->lstrip) begin = white_space_before(text, done, begin);
    if (best->rstrip) end = white_space_after(text, end);
    if (done < begin) segments.push_back({done, begin, -1});
    segments.push_back({begin, end, best->id});
    done = pos = end;
  }
  if (done < text.size()) segments.push_back({done, text.size(), -1});
  return segments;
}

}  // namespace emb::tokenizers
